#ifndef REGATTA_TESTS_INTEGRATION_TLS_CERTS_H_
#define REGATTA_TESTS_INTEGRATION_TLS_CERTS_H_

// Test certificates made with the openssl command: a CA, a server certificate for
// localhost/127.0.0.1, a client certificate, and a second CA nobody trusts with a client
// certificate of its own. Every leaf may serve and authenticate as a client (the executor's
// certificate is both). Serial numbers are chosen, so a test can tell which one is served.

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace regatta::testing {

class TestCerts {
 public:
  // Makes everything under `dir` (which must exist); false if openssl failed.
  bool Make(const std::string& dir) {
    dir_ = dir;
    std::ofstream(dir + "/leaf.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                        "extendedKeyUsage=serverAuth,clientAuth\n";
    return MakeCa("ca") && MakeCa("other-ca") && MakeLeaf("server", "ca", 1001) &&
           MakeLeaf("client", "ca", 2001) && MakeLeaf("stranger", "other-ca", 3001);
  }

  // A new certificate and key for `name` (signed by `ca`), replacing the files.
  bool MakeLeaf(const std::string& name, const std::string& ca, int serial) {
    const std::string p = dir_ + "/" + name;
    const std::string c = dir_ + "/" + ca;
    return Run(absl::StrCat("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes",
                            " -keyout ", p, ".key.new -out ", p, ".csr -subj /CN=", name)) &&
           Run(absl::StrCat("openssl x509 -req -in ", p, ".csr -CA ", c, ".crt -CAkey ", c,
                            ".key -set_serial ", serial, " -days 2 -extfile ", dir_,
                            "/leaf.ext -out ", p, ".crt.new")) &&
           Run(absl::StrCat("mv ", p, ".key.new ", p, ".key && mv ", p, ".crt.new ", p, ".crt"));
  }

  std::string crt(const std::string& name) const { return dir_ + "/" + name + ".crt"; }
  std::string key(const std::string& name) const { return dir_ + "/" + name + ".key"; }

  // The serial (decimal) of the certificate served at 127.0.0.1:port, or "" if none.
  std::string ServedSerial(int port) const {
    const std::string out = absl::StrCat(dir_, "/served-", port, ".txt");
    const std::string command =
        absl::StrCat("openssl s_client -connect 127.0.0.1:", port, " -alpn h2 -cert ",
                     crt("client"), " -key ", key("client"), " </dev/null 2>/dev/null",
                     " | openssl x509 -noout -serial > ", out, " 2>/dev/null");
    (void)std::system(command.c_str());
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);  // serial=3E9
    if (line.rfind("serial=", 0) != 0) return "";
    return std::to_string(std::stol(line.substr(7), nullptr, 16));
  }

 private:
  bool MakeCa(const std::string& name) {
    const std::string p = dir_ + "/" + name;
    return Run(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1",
                            " -nodes -keyout ", p, ".key -out ", p,
                            ".crt -days 2 -subj /CN=", name));
  }

  static bool Run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }

  std::string dir_;
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_INTEGRATION_TLS_CERTS_H_
