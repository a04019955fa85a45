!> zarr_mpi_write_all / zarr_mpi_read_all from Fortran (module zarr_mpi): array sections written in place,
!> 1-based starts, column-major buffers, an uneven split of the last Fortran dimension (the shards' rows
!> split anywhere; the last rank owns nothing and passes a zero-size section), a strided write
!> (step=), a read by another split, an overlap refused on every rank with the same message, a character
!> buffer refused cleanly, a zero-size buffer read through zarr_mpi_read_block, and zarr_mpi_resize without
!> the path. Run with 3 or more ranks; zarr-python reads the result
!> (mpi_check.py fortran_collective).
!>
!> The array: real(real64) a(nx, ny) in Fortran order, nx = 23, ny = 4 * nprocs + 3, shards of 8 x 8 with
!> inner chunks 4 x 4; a(i, j) = (j-1) * 1000 + (i-1) + gen (gen 0.25, then 0.5 for the strided write).
program test_mpi_collective_f
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi
  use zarr
  use zarr_mpi
  implicit none
  integer, parameter :: nx = 23
  type(zarr_array_t) :: a, c
  integer :: ierr, me, np, ny, stat, stat2, i, j, k, lo, hi, c0, c1, rows, wrong, odd
  real(real64), allocatable :: u(:, :), b(:, :), s(:, :), empty(:, :)
  character(len=4), allocatable :: text(:, :)
  logical, allocatable :: flags(:)
  type point
    real(real64) :: x
    integer :: k = 7
  end type point
  type(point) :: pts(nx)
  character(:), allocatable :: msg, msg0
  character(len=512) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  ny = 4 * np + 3
  call get_environment_variable('ZARR_TEST_TMPDIR', dir, status=stat)
  if (stat /= 0 .or. len_trim(dir) == 0) dir = '.'
  call zarr_mpi_create_from_spec(MPI_COMM_WORLD, trim(dir) // '/fortran_collective.zarr', a, shape=[nx, ny], &
                                 type=ZARR_FLOAT64, chunks=[4, 4], shards=[8, 8], codec='zstd', level=1, &
                                 fill=-1.0_real64)

  ! Uneven columns (Zarr rows): rank q < np - 1 gets columns lo+1..hi with widths growing with q; the last
  ! rank none. The block lives inside a halo of one cell; its interior section is written in place.
  call split(me, lo, hi)
  rows = hi - lo
  allocate(u(0:nx + 1, 0:rows + 1))
  u = -777.0_real64
  do j = 1, rows
    do i = 1, nx
      u(i, j) = val(i, lo + j, 0.25_real64)
    end do
  end do
  call zarr_mpi_write_all(MPI_COMM_WORLD, a, u(1:nx, 1:rows), start=[1_int64, int(lo + 1, int64)])
  call check_by_rows(0.25_real64)

  ! Strided: rank q writes columns q+1, q+1+np, ... (step np along the second dimension).
  rows = (ny - me + np - 1) / np
  allocate(s(nx, rows))
  do j = 1, rows
    do i = 1, nx
      s(i, j) = val(i, me + 1 + (j - 1) * np, 0.5_real64)
    end do
  end do
  ! (default integers for start and step, as the serial a%write takes them; int64 elsewhere)
  call zarr_mpi_write_all(MPI_COMM_WORLD, a, s, start=[1, me + 1], step=[1, np])
  call check_by_rows(0.5_real64)

  ! An overlap (rank 0 writes column 2, as rank 1 does): refused on every rank, nothing written.
  if (np > 1) then
    call zarr_mpi_write_all(MPI_COMM_WORLD, a, s(:, 1:1), start=[1_int64, int(max(me, 1) + 1, int64)], &
                            stat=stat, errmsg=msg)
    ! (the shared element quoted as the Fortran caller indexes it: a(1, 2))
    if (stat /= ZARR_ERR_INVALID_ARGUMENT .or. index(msg, 'overlap (both write element [1, 2])') == 0) then
      print '(a, i0, a)', 'rank ', me, ': expected an overlap error, got ' // msg
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    msg0 = msg
    call bcast_text(msg0)
    if (msg0 /= msg) then
      print '(a, i0, a)', 'rank ', me, ': another message than rank 0''s: ' // msg
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    if (me == 0) print '(a)', 'every rank: ' // msg
    call check_by_rows(0.5_real64)
  end if

  ! A buffer of an unsupported kind (character, default logical, a derived type) is a clean error on every
  ! rank, also with errmsg= (gfortran 12 crashed there while the buffers were assumed-type dummies: it
  ! passes a hidden length for a character actual argument, which the callee took for errmsg's).
  allocate(text(nx, 1))
  text = 'abcd'
  ! A start that is not an integer array: every rank fails alike.
  call zarr_mpi_write_all(MPI_COMM_WORLD, a, s, start=[1.0, 2.0], stat=stat)
  if (stat /= ZARR_ERR_INVALID_ARGUMENT) then
    print '(a, i0, a, i0)', 'rank ', me, ': a real start gave status ', stat
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call zarr_mpi_write_all(MPI_COMM_WORLD, a, text, stat=stat)
  if (stat /= ZARR_ERR_INVALID_ARGUMENT) then
    print '(a, i0, a, i0)', 'rank ', me, ': a character buffer gave status ', stat
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call zarr_mpi_write_all(MPI_COMM_WORLD, a, text, stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_write_all', 'the buffer is character')
  call zarr_mpi_write_block(MPI_COMM_WORLD, a, text, start=[1, 1], stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_write_block', 'the buffer is character')
  call zarr_mpi_read_all(MPI_COMM_WORLD, a, text, stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_read_all', 'the buffer is character')
  call zarr_mpi_read_block(MPI_COMM_WORLD, a, text(:, 1), stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_read_block', 'the buffer is character')
  allocate(flags(nx))
  call zarr_mpi_read_all(MPI_COMM_WORLD, a, flags, stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_read_all', 'the buffer is default logical')
  call zarr_mpi_write_block(MPI_COMM_WORLD, a, pts, stat=stat, errmsg=msg)
  call expect_kind_error('zarr_mpi_write_block', 'the buffer is of a derived or another type')
  ! A component section of a derived-type array (a strided real(real64) section) is read in place.
  pts(:)%x = -1.0_real64
  call zarr_mpi_read_all(MPI_COMM_WORLD, a, pts(:)%x, start=[1, 2])
  do i = 1, nx
    if (pts(i)%x /= val(i, 2, 0.5_real64) .or. pts(i)%k /= 7) then
      print '(a, i0, a, i0)', 'rank ', me, ': a component section read wrong at ', i
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  ! A zero-size buffer (a rank that owns nothing) reads and writes nothing, also through the block calls.
  allocate(empty(nx, 0))
  call zarr_mpi_read_block(MPI_COMM_WORLD, a, empty, start=[1_int64, 1_int64], stat=stat2, errmsg=msg)
  if (stat2 /= ZARR_OK) then
    print '(a, i0, a)', 'rank ', me, ': zarr_mpi_read_block into a zero-size buffer: ' // msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  ! The block calls take part in the handshake (operation, sequence numbers), named as the Fortran
  ! procedures: on a duplicate communicator the last rank reads while the others write.
  if (np > 1) then
    call MPI_Comm_dup(MPI_COMM_WORLD, odd, ierr)
    if (me == np - 1) then
      call zarr_mpi_read_block(odd, a, s(:, 1:1), start=[1, 1], stat=stat, errmsg=msg)
    else
      call zarr_mpi_write_block(odd, a, s(:, 1:1), start=[1, 1], stat=stat, errmsg=msg)
    end if
    if (stat /= ZARR_ERR_INVALID_ARGUMENT .or. index(msg, 'different collective calls') == 0 .or. &
        index(msg, 'zarr_mpi_read_block on rank') == 0 .or. index(msg, 'hyperslab') /= 0) then
      print '(a, i0, a)', 'rank ', me, ': expected different calls named as in Fortran, got ' // msg
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    call MPI_Comm_free(odd, ierr)
  end if
  ! A block out of bounds: the message names zarr_mpi_write_block (and libzarr's call), on every rank.
  call zarr_mpi_write_block(MPI_COMM_WORLD, a, s(:, 1:1), start=[1, ny + 1], stat=stat, errmsg=msg)
  if (stat /= ZARR_ERR_OUT_OF_BOUNDS .or. index(msg, 'zarr_mpi_write_block: zarr_write_hyperslab') == 0 .or. &
      index(msg, 'zarr_mpi_write_hyperslab') /= 0) then
    print '(a, i0, a)', 'rank ', me, ': an out-of-bounds block gave ' // msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  ! Resize without the path (the handle knows it), the shape in default integers; then back.
  call zarr_mpi_resize(MPI_COMM_WORLD, array=a, shape=[nx, ny + 2])
  if (any(a%shape() /= [nx, ny + 2])) then
    print '(a, i0, a)', 'rank ', me, ': the shape after zarr_mpi_resize is wrong'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call zarr_mpi_resize(MPI_COMM_WORLD, array=a, shape=[int(nx, int64), int(ny, int64)])
  call check_by_rows(0.5_real64)
  call zarr_mpi_close(MPI_COMM_WORLD, a)
  ! No clobber by default: creating where an array is fails every rank; clobber=.true. replaces it.
  call zarr_mpi_create_from_spec(MPI_COMM_WORLD, trim(dir) // '/clobber.zarr', c, shape=[4, 3], type=ZARR_INT32)
  call zarr_mpi_close(MPI_COMM_WORLD, c)
  call zarr_mpi_create_from_spec(MPI_COMM_WORLD, trim(dir) // '/clobber.zarr', c, shape=[5, 2], type=ZARR_INT32, &
                                 stat=stat, errmsg=msg)
  if (stat /= ZARR_ERR_EXISTS .or. index(msg, 'ZARR_MPI_CLOBBER') == 0) then
    print '(a, i0, a, i0, a)', 'rank ', me, ': a second create gave ', stat, ': ' // msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call zarr_mpi_create_from_spec(MPI_COMM_WORLD, trim(dir) // '/clobber.zarr', c, shape=[5, 2], type=ZARR_INT32, &
                                 clobber=.true.)
  if (any(c%shape() /= [5, 2])) then
    print '(a, i0, a)', 'rank ', me, ': the replaced array has the old shape'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call zarr_mpi_close(MPI_COMM_WORLD, c)
  if (me == 0) print '(a, i0, a)', 'Fortran collective I/O checked on ', np, ' ranks'
  call MPI_Finalize(ierr)

contains

  real(real64) function val(i, j, gen)
    integer, intent(in) :: i, j
    real(real64), intent(in) :: gen
    val = real((j - 1) * 1000 + (i - 1), real64) + gen
  end function val

  subroutine split(q, lo, hi)
    integer, intent(in) :: q
    integer, intent(out) :: lo, hi
    integer :: n, tri
    if (np == 1) then
      lo = 0
      hi = ny
      return
    end if
    n = np - 1
    tri = n * (n + 1) / 2
    if (q >= np - 1) then
      lo = ny
      hi = ny
    else
      lo = ny * (q * (q + 1) / 2) / tri
      hi = ny * ((q + 1) * (q + 2) / 2) / tri
    end if
  end subroutine split

  ! Each rank reads its even share of the first dimension (all of the second) and checks it.
  subroutine check_by_rows(gen)
    real(real64), intent(in) :: gen
    c0 = nx * me / np
    c1 = nx * (me + 1) / np
    if (allocated(b)) deallocate(b)
    allocate(b(c1 - c0, ny))
    call zarr_mpi_read_all(MPI_COMM_WORLD, a, b, start=[int(c0 + 1, int64), 1_int64])
    wrong = 0
    do k = 1, ny
      do i = 1, c1 - c0
        if (b(i, k) /= val(c0 + i, k, gen)) wrong = wrong + 1
      end do
    end do
    if (wrong /= 0) then
      print '(a, i0, a, i0, a)', 'rank ', me, ': ', wrong, ' cells differ'
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check_by_rows

  ! stat and errmsg of a buffer of an unsupported kind: INVALID_ARGUMENT on every rank, named.
  subroutine expect_kind_error(what, text)
    character(*), intent(in) :: what, text
    if (stat /= ZARR_ERR_INVALID_ARGUMENT .or. index(msg, what // ': ' // text) == 0) then
      print '(a, i0, a, i0, a)', 'rank ', me, ': ' // what // ' of an unsupported buffer gave status ', stat, &
                                 ', errmsg ' // msg
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine expect_kind_error

  subroutine bcast_text(t)
    character(:), allocatable, intent(inout) :: t
    integer :: n
    character(len=2048) :: buf
    n = len(t)
    call MPI_Bcast(n, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    buf = t
    call MPI_Bcast(buf, 2048, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    t = buf(1:n)
  end subroutine bcast_text
end program test_mpi_collective_f
