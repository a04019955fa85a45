! Reading a strided plane as double: a 3-D int16 field f(nx, ny, nt) stored as Zarr [nt, ny, nx];
! every second point of time step 3 is read straight into a real(real64) 2-D array (the library
! converts int16 to double and writes into the caller's memory: no temporary copy).
program strided_plane
  use, intrinsic :: iso_fortran_env, only: int16, real64
  use zarr
  implicit none
  integer, parameter :: nx = 8, ny = 6, nt = 4
  type(zarr_array_t) :: field
  integer(int16) :: f(nx, ny, nt)
  real(real64) :: plane(nx / 2, ny / 2)
  integer :: i, j, t, st

  do concurrent (i = 1:nx, j = 1:ny, t = 1:nt)
    f(i, j, t) = int(100 * t + 10 * j + i, int16)
  end do
  call field%create('strided_plane_f.zarr', '{"zarr_format": 3, "node_type": "array", "shape": [4, 6, 8], ' // &
    '"data_type": "int16", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 3, 4]}}, ' // &
    '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", ' // &
    '"configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]}', stat=st)
  if (st == ZARR_ERR_EXISTS) call field%open('strided_plane_f.zarr', mode=ZARR_READ_WRITE)
  call field%write(f)

  ! Points (1, 1), (3, 1), ... (7, 5) of time step 3: start/stride in Fortran order, 1-based.
  call field%read(plane, start=[1, 1, 3], stride=[2, 2, 1])
  do j = 1, ny / 2
    print '(4f8.1)', plane(:, j)
  end do
  if (any(plane /= real(f(1:nx:2, 1:ny:2, 3), real64))) error stop 'strided plane differs'
  call field%close()
end program strided_plane
