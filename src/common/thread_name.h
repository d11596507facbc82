#ifndef REGATTA_SRC_COMMON_THREAD_NAME_H_
#define REGATTA_SRC_COMMON_THREAD_NAME_H_

#include <pthread.h>

namespace regatta {

// Names the calling thread as `top -H`, perf and gdb show it. Linux keeps at most 15
// characters; longer names are cut there.
inline void SetThreadName(const char* name) {
  char truncated[16] = {};
  for (int i = 0; i < 15 && name[i] != '\0'; ++i) truncated[i] = name[i];
  pthread_setname_np(pthread_self(), truncated);
}

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_THREAD_NAME_H_
