! A downstream Fortran MPI program built against an installed libzarr (cmake/InstallTest.cmake): every
! rank writes its block of a 6 x 4 real(real64) array under the directory given as argument with the
! module zarr_mpi, then reads the whole array back and compares it with the formula a(i, j) = 10*i + j.
program zarr_downstream_fortran_mpi
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi
  use zarr
  use zarr_mpi
  implicit none
  character(len=4096) :: dir
  type(zarr_array_t) :: a
  integer(int64) :: start(2), count(2)
  real(real64), allocatable :: block(:, :)
  real(real64) :: whole(6, 4)
  integer :: ierr, me, i, j
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call get_command_argument(1, dir)
  call zarr_mpi_create(MPI_COMM_WORLD, trim(dir) // '/fortran_mpi.zarr', '{"zarr_format": 3, ' // &
    '"node_type": "array", "shape": [4, 6], "data_type": "float64", "chunk_grid": {"name": "regular", ' // &
    '"configuration": {"chunk_shape": [2, 3]}}, "chunk_key_encoding": {"name": "default"}, "fill_value": 0, ' // &
    '"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}', a)
  call zarr_mpi_decompose(MPI_COMM_WORLD, a, start, count)
  allocate(block(count(1), count(2)))
  do j = 1, int(count(2))
    do i = 1, int(count(1))
      block(i, j) = 10.0_real64 * (start(1) + i - 1) + (start(2) + j - 1)
    end do
  end do
  call zarr_mpi_write_block(MPI_COMM_WORLD, a, block, start)
  call zarr_mpi_read_block(MPI_COMM_WORLD, a, whole, [1_int64, 1_int64])
  call zarr_mpi_close(MPI_COMM_WORLD, a)
  do j = 1, 4
    do i = 1, 6
      if (whole(i, j) /= 10.0_real64 * i + j) error stop 'read back differs'
    end do
  end do
  if (me == 0) print '(a, a)', 'zarr_downstream_fortran_mpi: ok with libzarr ', zarr_version()
  call MPI_Finalize(ierr)
end program zarr_downstream_fortran_mpi
