#include "src/common/signals.h"

#include <pthread.h>

namespace regatta {

sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

int WaitForStopSignal(const sigset_t& stop_signals) {
  int signal = 0;
  sigwait(&stop_signals, &signal);
  return signal;
}

}  // namespace regatta
