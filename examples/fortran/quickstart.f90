! libzarr Fortran quick start: create a 6 x 4 int32 array (zstd), write it, read it back and print it.
! A Fortran array a(6, 4) is the Zarr array of shape [4, 6]: the metadata document is in Zarr order.
program quickstart
  use zarr
  implicit none
  type(zarr_array_t) :: array
  integer :: data(6, 4), back(6, 4), i, j, st
  character(:), allocatable :: msg

  do j = 1, 4
    do i = 1, 6
      data(i, j) = 10 * j + i
    end do
  end do
  call array%create('quickstart_f.zarr', '{"zarr_format": 3, "node_type": "array", "shape": [4, 6], ' // &
    '"data_type": "int32", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}}, ' // &
    '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", ' // &
    '"configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]}', &
    stat=st, errmsg=msg)
  if (st == ZARR_ERR_EXISTS) then   ! left by a previous run: open it and overwrite the values
    call array%open('quickstart_f.zarr', mode=ZARR_READ_WRITE)
  else if (st /= ZARR_OK) then
    print '(a)', msg
    error stop 1
  end if
  call array%write(data)            ! no stat: a failure stops the program with the library's message
  call array%read(back)
  print '(a, 2(i0, 1x), a)', 'shape (Fortran order): ', array%shape(), ''
  do j = 1, 4
    print '(6i4)', back(:, j)
  end do
  if (any(back /= data)) error stop 'read back differs'
  call array%close()
end program quickstart
