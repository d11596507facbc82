# regatta_add_library(NAME SRCS a.cc b.cc DEPS lib... [PUBLIC_DEPS lib...])
# One library per source folder; headers are included as "src/<folder>/<file>.h".
function(regatta_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# regatta_add_test(NAME SRCS a_test.cc DEPS lib... [LABELS unit|integration|e2e|slow]
#                  [TIMEOUT seconds])
# Every test is a gtest binary registered with CTest under its labels and a timeout, so
# `ctest -L unit` and `ctest -LE slow` select what a run needs.
function(regatta_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}"
                       ENVIRONMENT "REGATTA_BINARY=${PROJECT_BINARY_DIR}/cmd/regatta/regatta")
endfunction()

# regatta_add_benchmark(NAME SRCS a_bench.cc DEPS lib...)
function(regatta_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  regatta_link_allocator(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
endfunction()

# regatta_embed_files(OUT_VAR NAMESPACE ns FILES a.sql b.sql): generates a .cc defining
# `const std::vector<std::pair<std::string_view, std::string_view>>& ns::EmbeddedFiles()` whose
# entries are (file name, contents), sorted by name. Used for numbered SQL migrations.
function(regatta_embed_files out_var)
  cmake_parse_arguments(ARG "" "NAMESPACE;NAME" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${ARG_NAMESPACE} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    VERBATIM)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
