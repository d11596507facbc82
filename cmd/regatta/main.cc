// The `regatta` binary: every verb lives in src/cli (regatta_cli).
#include "src/cli/app.h"

int main(int argc, char** argv) { return regatta::cli::Main(argc, argv); }
