#ifndef REGATTA_SRC_API_AUTH_PRINCIPAL_H_
#define REGATTA_SRC_API_AUTH_PRINCIPAL_H_

#include <string>
#include <vector>

namespace regatta::auth {

// Name of the principal used for requests without credentials (when anonymous access is on).
// Reserved: the users file may not define a user or token with this name.
inline constexpr char kAnonymousPrincipalName[] = "anonymous";

// gRPC metadata in which the REST gateway passes on the address of its HTTP client. Trusted only
// on calls that arrive in-process (the gateway's channel); from the network it is ignored, so a
// caller cannot choose which address its failed password checks are counted against.
inline constexpr char kGatewayClientAddressMetadata[] = "x-regatta-gateway-client-address";

// Who made a request, as established by the Authenticator.
struct Principal {
  std::string name;
  std::vector<std::string> groups;
  bool anonymous = false;
};

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_PRINCIPAL_H_
