"""Which launcher started this process, from its environment: MPI's `mpiexec` (MPICH/Hydra's
`PMI_*`, Open MPI's `OMPI_COMM_WORLD_*` and PRRTE's `PRTE_LAUNCHED`) or Slurm's `srun`.

`detect(environ)` is a pure function of the environment, so it is tested without a launcher.
The rank and size it reads are checked against MPI's world communicator by `initialize`, which
takes them from MPI in the end.

Imports nothing of omnistage's.
"""
import collections

Launch = collections.namedtuple("Launch", "name rank size local_rank")

# (launcher, rank variable, size variable, local rank variable), most specific first: Open MPI
# and MPICH may run inside a Slurm allocation, whose variables then describe the allocation
LAUNCHERS = (
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("PRRTE", "PMIX_RANK", None, None),  # prterun/mpiexec of Open MPI 5 without OMPI_* variables
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
)


def _int(environ, name, launcher):
    if name is None or name not in environ:
        return None
    text = environ[name]
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{launcher} variable {name}={text!r} is not an integer") from None


def detect(environ):
    """The Launch described by `environ` (a mapping), or None when no launcher started us."""
    for name, rank, size, local in LAUNCHERS:
        if rank in environ:
            return Launch(name, _int(environ, rank, name), _int(environ, size, name), _int(environ, local, name))
    if "PRTE_LAUNCHED" in environ:
        return Launch("PRRTE", None, None, None)
    return None
