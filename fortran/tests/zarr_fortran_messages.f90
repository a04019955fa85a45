! The module's error messages quote indices as a Fortran caller wrote them: Fortran order, 1-based
! (test fortran.messages). A Fortran array of shape [4, 5, 10] is the Zarr array [10, 5, 4]; a
! selection outside it must be reported with the caller's start, count and shape and the caller's
! dimension number, not with the reversed, 0-based Zarr ones.
program zarr_fortran_messages
  use, intrinsic :: iso_fortran_env, only: real64
  use zarr
  implicit none
  type(zarr_array_t) :: a
  real(real64) :: plane(2, 3), col(3)
  character(len=1024) :: dir
  character(:), allocatable :: msg
  integer :: st, failed = 0

  call get_environment_variable('ZARR_TEST_TMPDIR', dir)
  if (len_trim(dir) == 0) dir = '.'
  call a%create(trim(dir) // '/messages.zarr', shape=[4, 5, 10], type=ZARR_FLOAT64, chunks=[4, 5, 2], &
                stat=st, errmsg=msg)
  call expect(st == ZARR_OK, 'create: ' // msg)

  ! Past the end of the last Fortran dimension (Zarr's first).
  call a%read(plane, start=[3, 3, 11], stat=st, errmsg=msg)
  call expect(st == ZARR_ERR_OUT_OF_BOUNDS, 'status of the read past dimension 3')
  call expect(index(msg, 'selection start [3, 3, 11] count [2, 3, 1] step [1, 1, 1] exceeds the array ' // &
                    'shape [4, 5, 10] in dimension 3') > 0, 'message of the read past dimension 3: ' // msg)

  ! Past the end of the first Fortran dimension (Zarr's last), with a stride, writing.
  plane = 1
  call a%write(plane, start=[3, 1, 1], stride=[2, 1, 1], stat=st, errmsg=msg)
  call expect(st == ZARR_ERR_OUT_OF_BOUNDS, 'status of the write past dimension 1')
  call expect(index(msg, 'selection start [3, 1, 1] count [2, 3, 1] step [2, 1, 1] exceeds the array ' // &
                    'shape [4, 5, 10] in dimension 1') > 0, 'message of the write past dimension 1: ' // msg)

  ! A count longer than the dimension.
  call a%read(col, start=[1, 4, 1], count=[1, 3, 1], stat=st, errmsg=msg)
  call expect(index(msg, 'start [1, 4, 1] count [1, 3, 1]') > 0 .and. index(msg, 'in dimension 2') > 0, &
              'message of the read past dimension 2: ' // msg)

  ! In bounds still works.
  call a%read(plane, start=[3, 3, 10], stat=st, errmsg=msg)
  call expect(st == ZARR_OK .and. msg == '', 'read in bounds')
  call a%close()

  if (failed > 0) error stop 1
  print '(a)', 'fortran messages: all passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      failed = failed + 1
      print '(a)', 'FAIL ' // what
    end if
  end subroutine expect

end program zarr_fortran_messages
