// The machine's process-spawn ceiling: N x posix_spawn("/bin/true") + waitpid, one at a time.
// Built and run by bench/scripts/run_vs_peers.sh next to Regatta's end-to-end figure.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char** environ;

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  char* args[] = {"/bin/true", NULL};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; i++) {
    pid_t pid;
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0) return 1;
    int status;
    waitpid(pid, &status, 0);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  printf("RESULT spawn-floor posix_spawn /bin/true x%d in %.3f s (%.0f/s)\n", n, t, n / t);
  return 0;
}
