/* bench-mpi-allreduce: Open MPI's own MPI_Allreduce (sum, in place) of N f32, the reference
 * bench-ddp's allreduce is compared with (bench/compare-torch/run-ddp.sh): the same buffer,
 * warm-up and number of calls, no engine. Prints mpi_allreduce_ms= and mpi_allreduce_gbps=.
 * Usage: mpirun -np W bench-mpi-allreduce [N]   (default 669,706: the MLP's parameters) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-util.h"

enum { AR_WARMUP = 10, AR_ROUNDS = 200 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long long n = argc > 1 ? atoll(argv[1]) : 669706;
  int rank, world;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  float *buf = malloc((size_t)n * sizeof *buf);
  if (!buf)
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (long long i = 0; i < n; i++)
    buf[i] = 1.0f;
  for (int i = 0; i < AR_WARMUP; i++)
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_s();
  for (int i = 0; i < AR_ROUNDS; i++)
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double per_call = (bench_now_s() - t0) / AR_ROUNDS;
  if (rank == 0) {
    printf("# MPI_Allreduce of %lld f32 (%.2f MB) on %d ranks, mean of %d calls\n", n,
           (double)n * 4 / 1e6, world, AR_ROUNDS);
    bench_result("mpi_allreduce_ms", per_call * 1e3, "ms");
    bench_result("mpi_allreduce_gbps", (double)n * 4 / per_call / 1e9, "GB/s");
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
