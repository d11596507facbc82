#ifndef REGATTA_TESTS_UNIT_DEVICES_OPCUA_TEST_PORTS_H_
#define REGATTA_TESTS_UNIT_DEVICES_OPCUA_TEST_PORTS_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace regatta::devices::opcua::testing {

// A loopback port nothing listens on right now (bound, then closed again).
inline int UnusedLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace regatta::devices::opcua::testing

#endif  // REGATTA_TESTS_UNIT_DEVICES_OPCUA_TEST_PORTS_H_
