#ifndef REGATTA_SRC_COMMON_SIGNALS_H_
#define REGATTA_SRC_COMMON_SIGNALS_H_

#include <csignal>

namespace regatta {

// Blocks SIGINT and SIGTERM in the calling thread (call it before any thread starts, so every
// thread inherits the mask and only sigwait receives them) and ignores SIGPIPE (a client that
// disconnects mid-write must not kill a server). Returns the blocked set for WaitForStopSignal.
sigset_t BlockStopSignals();

// Waits for one of `stop_signals`; returns it.
int WaitForStopSignal(const sigset_t& stop_signals);

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_SIGNALS_H_
