/*
 * What touching memory costs on this machine: the first write to each 4 KiB page of a fresh
 * anonymous mapping, region after region, none freed until the process exits (docs/benchmarks.md
 * section 3, "stop 48"). On the project's 2-vCPU virtual machines a page the guest has not touched
 * for some seconds costs about 12 us (340 MB/s): the host backs it anew. Pages freed a moment ago
 * cost 1.3-1.5 us (about 3 GB/s); run it twice in a row, then again after 20 s, to see both.
 *
 *   cc -O2 -o page_touch docs/tools/page_touch.c && ./page_touch 2048 6   # MiB per region, regions
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MIB_PER_REGION REGIONS\n", argv[0]);
    return 2;
  }
  size_t n = (size_t)atol(argv[1]) << 20;
  int regions = atoi(argv[2]);
  for (int r = 0; r < regions; r++) {
    char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    double t0 = now();
    for (size_t i = 0; i < n; i += 4096) {
      p[i] = 1;
    }
    double t = now() - t0;
    printf("region %d: first touch %.0f MB/s, %.2f us a page\n", r, n / 1e6 / t, t * 1e6 / (n / 4096));
    fflush(stdout);
  }
  return 0;
}
