! libzarr Fortran example: a time-stepping code writes its 2-D field once per step into a sharded
! array created with the keyword API, growing the time dimension by resize() before each step.
! A Fortran array field(nx, ny) at step t is element (:, :, t) of the array (nx, ny, time); Zarr sees
! the shape [time, ny, nx]. At the end the file is read back and compared with the fields kept in
! memory (exit status 1 on a mismatch).
program simulation
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use zarr
  implicit none
  integer, parameter :: nx = 32, ny = 24, nt = 12
  character(*), parameter :: path = 'simulation_f.zarr'
  type(zarr_array_t) :: out
  real(real64) :: field(nx, ny), next(nx, ny), history(nx, ny, nt), back(nx, ny, nt)
  integer :: t, st
  character(:), allocatable :: msg

  ! Initial condition: a hot square in a cold plate.
  field = 0
  field(nx / 4:nx / 2, ny / 4:ny / 2) = 100

  ! Shards of 8 time steps (one object holds [8, 24, 32]), inner chunks of one step and half a plane.
  call out%create(path, shape=[nx, ny, 1], type=ZARR_FLOAT64, chunks=[nx / 2, ny, 1], shards=[nx, ny, 8], &
                  codec='zstd', level=5, fill=-999.0_real64, dimension_names=['x   ', 'y   ', 'time'], &
                  attributes='{"title": "heat equation, explicit Euler", "units": "K"}', stat=st, errmsg=msg)
  if (st == ZARR_ERR_EXISTS) then    ! a previous run left it: start again from one step
    call out%open(path, mode=ZARR_READ_WRITE)
    call out%resize([nx, ny, 1])
  else if (st /= ZARR_OK) then
    print '(a)', msg
    error stop 1
  end if

  do t = 1, nt
    if (t > 1) then
      ! One explicit step of the heat equation (fixed boundary).
      next = field
      next(2:nx - 1, 2:ny - 1) = field(2:nx - 1, 2:ny - 1) + 0.2_real64 * (field(1:nx - 2, 2:ny - 1) + &
        field(3:nx, 2:ny - 1) + field(2:nx - 1, 1:ny - 2) + field(2:nx - 1, 3:ny) - 4 * field(2:nx - 1, 2:ny - 1))
      field = next
      call out%resize([nx, ny, t])   ! append one time step
    end if
    call out%write(field, start=[1, 1, t])
    history(:, :, t) = field
  end do
  call out%close()

  ! Read everything back and check it.
  call out%open(path)
  if (any(out%shape() /= [int(nx, int64), int(ny, int64), int(nt, int64)])) error stop 'wrong shape'
  if (any(out%chunk_shape() /= [int(nx, int64), int(ny, int64), 8_int64])) error stop 'wrong shard shape'
  if (any(out%inner_chunk_shape() /= [int(nx / 2, int64), int(ny, int64), 1_int64])) error stop 'wrong chunks'
  if (out%dimension_name(3) /= 'time') error stop 'wrong dimension name'
  call out%read(back)
  if (any(back /= history)) error stop 'read back differs'
  call out%close()
  print '(a, i0, a, 3(i0, 1x), a, f8.4)', 'wrote ', nt, ' steps; shape (Fortran order): ', nx, ny, nt, &
    '; centre at the end: ', back(nx / 2, ny / 2, nt)
end program simulation
