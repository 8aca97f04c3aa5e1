# mpi4py hello world for grove's Open MPI tests.
from mpi4py import MPI

comm = MPI.COMM_WORLD
total = comm.allreduce(comm.Get_rank(), op=MPI.SUM)
print(f"mpi4py hello from rank {comm.Get_rank()} of {comm.Get_size()}, sum {total}", flush=True)
