# Every dependency comes from Debian 12's packages; docs/dependencies.md says why each is here.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS system)
find_package(OpenSSL REQUIRED)
# Only the core (registry, metric families, text serializer) is linked: /metrics is served on
# the REST listener (docs/dependencies.md).
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
pkg_check_modules(CJOSE REQUIRED IMPORTED_TARGET cjose)
find_package(CURL REQUIRED)
if(REGATTA_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(REGATTA_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

# jemalloc replaces glibc malloc in the binaries (not the libraries): the submit path allocates
# and frees many small protobuf objects, and glibc's malloc_consolidate showed up at the top of
# profiles; jemalloc made the submit benchmark ~1.5x faster (docs/benchmarks.md).
option(REGATTA_USE_JEMALLOC "Link the regatta binary and benchmarks with jemalloc" ON)
if(REGATTA_USE_JEMALLOC)
  find_library(JEMALLOC_LIBRARY NAMES jemalloc REQUIRED)
endif()

# regatta_link_allocator(target): links the process-wide allocator into an executable.
function(regatta_link_allocator target)
  if(REGATTA_USE_JEMALLOC)
    target_link_libraries(${target} PRIVATE ${JEMALLOC_LIBRARY})
  endif()
endfunction()
