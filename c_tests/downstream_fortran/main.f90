! A downstream Fortran program built against an installed libzarr (cmake/InstallTest.cmake): writes a
! 5 x 3 real(real64) array under the directory given as argument, reads it back and compares.
program zarr_downstream_fortran
  use, intrinsic :: iso_fortran_env, only: real64
  use zarr
  implicit none
  character(len=4096) :: dir
  type(zarr_array_t) :: a
  real(real64) :: x(5, 3), y(5, 3)
  integer :: i
  call get_command_argument(1, dir)
  x = reshape([(0.5_real64 * i, i = 1, 15)], [5, 3])
  call a%create(trim(dir) // '/f.zarr', '{"zarr_format": 3, "node_type": "array", "shape": [3, 5], ' // &
    '"data_type": "float64", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}, ' // &
    '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", ' // &
    '"configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]}')
  call a%write(x)
  call a%read(y)
  call a%close()
  if (any(abs(x - y) > 0)) error stop 'read back differs'
  print '(a, a)', 'zarr_downstream_fortran: ok with libzarr ', zarr_version()
end program zarr_downstream_fortran
