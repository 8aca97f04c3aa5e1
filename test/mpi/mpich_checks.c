/* What the MPICH tests check under grove run (test/multinode/test_pmi_jobs.cc
 * and the swarm): each rank says where it runs (MPI_Get_processor_name), a
 * token goes round a ring, an allreduce and an alltoall are checked. With
 * "abort CODE" the last rank calls MPI_Abort(CODE) while the others wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, length = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &length);
  if (argc > 2 && strcmp(argv[1], "abort") == 0) {
    if (rank == size - 1) MPI_Abort(MPI_COMM_WORLD, atoi(argv[2]));
    MPI_Barrier(MPI_COMM_WORLD); /* never completes: the job is ended */
  }
  /* The ring: rank 0 sends 1, each rank adds one and passes it on. */
  int token = 1;
  if (size > 1) {
    const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++token;
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int* out = malloc(sizeof(int) * (size_t)size);
  int* in = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; ++i)
    out[i] = rank * 1000 + i;
  MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
  int alltoall_ok = 1;
  for (int i = 0; i < size; ++i)
    alltoall_ok &= in[i] == i * 1000 + rank;
  printf("mpich rank %d of %d on %s: ring %s allreduce %d alltoall %s\n", rank, size, host,
         token == size ? "ok" : "BAD", sum, alltoall_ok ? "ok" : "BAD");
  fflush(stdout);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
