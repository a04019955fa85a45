!> Every rank writes its block of a sharded 3-D array with the module zarr_mpi, then reads a neighbour's
!> block and the whole array and compares them with the formula; one rank then passes a bad argument and
!> every rank gets the error, then one rank reads past the array's end and every rank gets the message,
!> which quotes the block in Fortran order, 1-based. Run with any number of ranks:
!>
!>   mpiexec -n 3 ./fortran_mpi_blocks        (writes mpi_blocks.zarr in $ZARR_TEST_TMPDIR or here;
!>                                              a second run overwrites it)
!>
!> The array is real(real64) a(40, 30, 12) in Fortran order (Zarr shape [12, 30, 40]), shards of
!> 20 x 15 x 4 (Fortran order), inner chunks of 10 x 5 x 2, zstd level 1, fill value -1, created from
!> keywords (no JSON); a(i, j, k) = (k-1)*10000 + (j-1)*100 + (i-1).
!> Each rank keeps its block inside a larger array with a one-cell halo and writes the interior section
!> in place.
program mpi_blocks
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use mpi
  use zarr
  use zarr_mpi
  implicit none
  integer, parameter :: nx = 40, ny = 30, nz = 12
  type(zarr_array_t) :: a
  integer :: ierr, me, nprocs, grid(3), stat, i, j, k, wrong, total
  integer(int64) :: start(3), count(3), blocks(6, 0:63), nb(3), nc(3)
  logical :: shared
  real(real64), allocatable :: local(:, :, :), other(:, :, :)
  integer(int32), allocatable :: whole(:, :, :)
  character(:), allocatable :: msg
  character(len=512) :: dir
  character(:), allocatable :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs > 64) error stop 'at most 64 ranks'
  call get_environment_variable('ZARR_TEST_TMPDIR', dir, status=stat)
  if (stat /= 0 .or. len_trim(dir) == 0) dir = '.'
  path = trim(dir) // '/mpi_blocks.zarr'

  ! Runs again as often as wanted: the array of an earlier run (ZARR_ERR_EXISTS, on every rank alike) is
  ! opened instead and every cell of it written again; one of another shape is left alone (stop).
  call zarr_mpi_create_from_spec(MPI_COMM_WORLD, path, a, shape=[nx, ny, nz], type=ZARR_FLOAT64, &
                                 chunks=[10, 5, 2], shards=[20, 15, 4], codec='zstd', level=1, fill=-1.0_real64, &
                                 stat=stat, errmsg=msg)
  if (stat == ZARR_ERR_EXISTS) then
    if (me == 0) print '(a)', path // ' exists (an earlier run): overwriting every cell of it'
    call zarr_mpi_open(MPI_COMM_WORLD, path, a, mode=ZARR_READ_WRITE)
    if (any(a%shape() /= [nx, ny, nz])) error stop 'mpi_blocks.zarr of another shape exists: remove it'
  else if (stat /= ZARR_OK) then
    error stop msg
  end if
  call zarr_mpi_decompose(MPI_COMM_WORLD, a, start, count, grid=grid, shared=shared)
  if (shared) error stop 'a shard-aligned decomposition was expected'

  ! This rank's block, inside a halo of one cell; the interior section is written in place.
  allocate(local(0:count(1) + 1, 0:count(2) + 1, 0:count(3) + 1))
  local = -7.0_real64
  do k = 1, int(count(3))
    do j = 1, int(count(2))
      do i = 1, int(count(1))
        local(i, j, k) = val(start(1) + i - 1, start(2) + j - 1, start(3) + k - 1)
      end do
    end do
  end do
  call zarr_mpi_write_block(MPI_COMM_WORLD, a, local(1:count(1), 1:count(2), 1:count(3)), start)

  ! Every rank's block (start, count), then the next rank's block, read back.
  call MPI_Allgather([start, count], 6, MPI_INTEGER8, blocks, 6, MPI_INTEGER8, MPI_COMM_WORLD, ierr)
  nb = blocks(1:3, mod(me + 1, nprocs))
  nc = blocks(4:6, mod(me + 1, nprocs))
  allocate(other(nc(1), nc(2), nc(3)))
  call zarr_mpi_read_block(MPI_COMM_WORLD, a, other, nb)
  wrong = 0
  do k = 1, int(nc(3))
    do j = 1, int(nc(2))
      do i = 1, int(nc(1))
        if (other(i, j, k) /= val(nb(1) + i - 1, nb(2) + j - 1, nb(3) + k - 1)) wrong = wrong + 1
      end do
    end do
  end do

  ! The whole array, converted to int32 by the read.
  allocate(whole(nx, ny, nz))
  call zarr_mpi_read_block(MPI_COMM_WORLD, a, whole)
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        if (real(whole(i, j, k), real64) /= val(int(i, int64), int(j, int64), int(k, int64))) wrong = wrong + 1
      end do
    end do
  end do

  ! A bad argument on the last rank only (a start with 2 values for a 3-D array): every rank gets it.
  if (me == nprocs - 1) then
    call zarr_mpi_write_block(MPI_COMM_WORLD, a, local(1:count(1), 1:count(2), 1:count(3)), start(1:2), &
                              stat=stat, errmsg=msg)
  else
    call zarr_mpi_write_block(MPI_COMM_WORLD, a, local(1:count(1), 1:count(2), 1:count(3)), start, &
                              stat=stat, errmsg=msg)
  end if
  if (stat /= ZARR_ERR_INVALID_ARGUMENT .or. index(msg, 'start has 2 values') == 0 .or. &
      index(msg, 'rank ' // itoa(nprocs - 1) // ' of ') == 0) then
    print '(a, i0, a, i0, 2a)', 'rank ', me, ': unexpected stat ', stat, ': ', msg
    wrong = wrong + 1
  end if
  ! A block reaching past the array on rank 0: the message quotes it as written here, in Fortran order
  ! and 1-based, on every rank.
  if (me == 0) then
    call zarr_mpi_read_block(MPI_COMM_WORLD, a, other(:, :, 1:1), [int(nx, int64), 1_int64, 1_int64], &
                             stat=stat, errmsg=msg)
  else
    call zarr_mpi_read_block(MPI_COMM_WORLD, a, other(:, :, 1:1), [1_int64, 1_int64, 1_int64], &
                             stat=stat, errmsg=msg)
  end if
  if (stat /= ZARR_ERR_OUT_OF_BOUNDS .or. index(msg, 'rank 0 of ') == 0 .or. &
      index(msg, 'start [' // itoa(nx) // ', 1, 1]') == 0 .or. index(msg, 'shape [40, 30, 12] in dimension 1') == 0) then
    print '(a, i0, a, i0, 2a)', 'rank ', me, ': unexpected stat ', stat, ': ', msg
    wrong = wrong + 1
  end if
  call zarr_mpi_close(MPI_COMM_WORLD, a)

  call MPI_Allreduce(wrong, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a, 3(i0, 1x), a, i0)', 'mpi_blocks: ', nprocs, ' ranks, grid ', grid, &
    'wrong cells: ', total
  call MPI_Finalize(ierr)
  if (total /= 0) error stop 1

contains

  pure real(real64) function val(i, j, k)
    integer(int64), intent(in) :: i, j, k
    val = real((k - 1) * 10000 + (j - 1) * 100 + (i - 1), real64)
  end function val

  function itoa(n) result(s)
    integer, intent(in) :: n
    character(:), allocatable :: s
    character(len=16) :: buf
    write(buf, '(i0)') n
    s = trim(buf)
  end function itoa
end program mpi_blocks
