/* An MPI program for grove's Open MPI tests: init, allreduce, alltoall,
 * barrier, finalize, each result checked. Prints one line per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long expected = (long)size * (size + 1) / 2;
  if (sum != expected) {
    fprintf(stderr, "rank %d: allreduce gave %ld, expected %ld\n", rank, sum, expected);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  int* out = malloc(sizeof(int) * (size_t)size);
  int* in = malloc(sizeof(int) * (size_t)size);
  for (int peer = 0; peer < size; ++peer)
    out[peer] = rank * 1000 + peer;
  MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
  for (int peer = 0; peer < size; ++peer) {
    if (in[peer] != peer * 1000 + rank) {
      fprintf(stderr, "rank %d: alltoall from %d gave %d\n", rank, peer, in[peer]);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  free(out);
  free(in);

  MPI_Barrier(MPI_COMM_WORLD);
  printf("mpi rank %d of %d: allreduce %ld alltoall ok barrier ok\n", rank, size, sum);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
