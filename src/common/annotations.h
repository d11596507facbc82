#ifndef REGATTA_SRC_COMMON_ANNOTATIONS_H_
#define REGATTA_SRC_COMMON_ANNOTATIONS_H_

namespace regatta {

// Job annotations that one component writes and another acts on.

// Directories a run needs before its process starts, one absolute path per line. The local
// executor creates them just before it starts the process, as KFP's launcher does in a step's
// pod; the pipeline engine names a step's output directories here.
inline constexpr char kCreateDirectoriesAnnotation[] = "regatta.io/create-directories";

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_ANNOTATIONS_H_
