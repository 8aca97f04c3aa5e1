/* The smallest whole MPI job, for benchmarks/mpi_jobs.py: init, one
 * barrier, finalize. Rank 0 prints one line, so output costs stay out of
 * the launch-to-exit time. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("mpi hello: %d ranks\n", size);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
