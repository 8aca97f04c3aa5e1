/* Where a job's time goes before its ranks can talk (issue 18's MPI_Init
 * profile). Every rank takes the wall clock on entering main, after
 * MPI_Init and after one barrier; rank 0 prints, relative to the first
 * rank's start:
 *   init_profile ranks=N start_spread_s=A init_done_first_s=B
 *     init_done_last_s=C barrier_done_s=D
 * start_spread: how long the runtime took to get every rank to main;
 * init_done_*: when the first and last rank left MPI_Init. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double wall_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  double marks[3];
  marks[0] = wall_seconds();
  MPI_Init(&argc, &argv);
  marks[1] = wall_seconds();
  MPI_Barrier(MPI_COMM_WORLD);
  marks[2] = wall_seconds();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double first[3], last[3];
  MPI_Reduce(marks, first, 3, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(marks, last, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "init_profile ranks=%d start_spread_s=%.3f init_done_first_s=%.3f "
        "init_done_last_s=%.3f barrier_done_s=%.3f\n",
        size, last[0] - first[0], first[1] - first[0], last[1] - first[0], last[2] - first[0]);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
