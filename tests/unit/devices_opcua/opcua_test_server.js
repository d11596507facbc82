// A node-opcua server for the OPC UA handler's end-to-end test:
//   NODE_PATH=<cache>/node_modules node opcua_test_server.js PORT APPLICATION_NAME PKI_DIR
// Listens on 127.0.0.1:PORT, announces opc.tcp://127.0.0.1:PORT as its discovery URL, prints
// "listening <url>" once it serves, and runs until SIGTERM/SIGINT.
"use strict";

const { OPCUAServer } = require("node-opcua-server");
const { OPCUACertificateManager } = require("node-opcua-certificate-manager");

async function main() {
  const [port, applicationName, pkiDir] = process.argv.slice(2);
  if (!port || !applicationName || !pkiDir) {
    console.error("usage: opcua_test_server.js PORT APPLICATION_NAME PKI_DIR");
    process.exit(2);
  }
  const certificateManager = new OPCUACertificateManager({
    rootFolder: pkiDir,
    automaticallyAcceptUnknownCertificate: true,
  });
  const server = new OPCUAServer({
    port: Number(port),
    host: "127.0.0.1",
    hostname: "127.0.0.1",
    serverCertificateManager: certificateManager,
    serverInfo: {
      applicationName: { text: applicationName, locale: "en" },
      applicationUri: `urn:regatta-test:${applicationName.replace(/[^A-Za-z0-9]/g, "-")}`,
      productUri: "urn:regatta-test",
    },
    // Nothing beyond the standard address space is needed for FindServers.
  });
  await server.start();
  console.log(`listening opc.tcp://127.0.0.1:${port}`);
  const stop = async () => {
    await server.shutdown(0);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error(`opcua_test_server: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
