!> Fortran interface to libzarr_mpi (include/zarr_mpi.h): module `zarr_mpi` (Fortran 2018, iso_c_binding),
!> collective creation, decomposition and block I/O of Zarr arrays over MPI, on top of module `zarr`.
!>
!>   use mpi            ! or mpi_f08: pass comm%MPI_VAL
!>   use zarr
!>   use zarr_mpi
!>   type(zarr_array_t) :: a
!>   integer(int64) :: start(3), count(3)
!>   real(real64), allocatable :: block(:, :, :)
!>   call zarr_mpi_create_from_spec(MPI_COMM_WORLD, 'out.zarr', a, shape=[nx, ny, nz], &
!>                                  type=ZARR_FLOAT64, chunks=[nx, ny, 1])   ! rank 0 writes zarr.json
!>   (or zarr_mpi_create(MPI_COMM_WORLD, 'out.zarr', metadata_json, a) from a metadata document)
!>   call zarr_mpi_decompose(MPI_COMM_WORLD, a, start, count)             ! this rank's shard-aligned block
!>   allocate(block(count(1), count(2), count(3)))
!>   ... fill block ...
!>   call zarr_mpi_write_block(MPI_COMM_WORLD, a, block, start)
!>   call zarr_mpi_close(MPI_COMM_WORLD, a)
!>
!> Communicators are default-kind integers: those of `use mpi` and mpif.h, or comm%MPI_VAL of an mpi_f08
!> type(MPI_Comm) (this module needs no MPI Fortran module, so it works with either).
!>
!> Order and indices are module zarr's: Fortran order (dimensions reversed with respect to Zarr's) and
!> 1-based starts. Buffers of write_block/read_block are of any rank up to the array's and of the kinds
!> module zarr reads and writes except default logical (integer(int8/16/32/64), real(real32/64),
!> complex(real32/64), logical(c_bool)); array sections are read and written in place.
!>
!> Collective procedures (all but zarr_mpi_decompose) must be called by every rank of the communicator in
!> the same order. They return the same `stat` on every rank: when one rank fails (a bad argument on that
!> rank alone included), every rank gets that rank's status and an errmsg "rank R of N: <status>: <message>",
!> and no rank hangs. Without `stat`, a failure prints errmsg and stops (ERROR STOP: on every rank alike).
module zarr_mpi
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64, error_unit
  use zarr, only: zarr_array_t, ZARR_OK, ZARR_READ, ZARR_READ_WRITE, ZARR_ERR_INVALID_ARGUMENT, &
                  zarr_c_spec_new, zarr_c_spec_free, ZARR_BOOL, ZARR_INT8, ZARR_INT16, ZARR_INT32, ZARR_INT64, &
                  ZARR_FLOAT32, ZARR_FLOAT64, ZARR_COMPLEX64, ZARR_COMPLEX128
  implicit none
  private

  public :: zarr_mpi_create, zarr_mpi_create_from_spec, zarr_mpi_open, zarr_mpi_close, zarr_mpi_decompose, &
            zarr_mpi_write_block, zarr_mpi_read_block, zarr_mpi_resize, zarr_mpi_agree, zarr_mpi_balance_threads, &
            zarr_mpi_write_all, zarr_mpi_read_all

  interface
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
    function c_last_error() bind(C, name="zarr_mpi_f_last_error") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_last_error
    function c_agree(comm, local, message) bind(C, name="zarr_mpi_f_agree") result(st)
      import :: c_int, c_int32_t, c_char
      integer(c_int), value :: comm
      integer(c_int32_t), value :: local
      character(kind=c_char), intent(in) :: message(*)
      integer(c_int32_t) :: st
    end function c_agree
    function c_create(comm, path, json, flags, out) bind(C, name="zarr_mpi_f_create") result(st)
      import :: c_int, c_int32_t, c_char, c_ptr
      integer(c_int), value :: comm, flags
      character(kind=c_char), intent(in) :: path(*), json(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_create
    function c_create_from_spec(comm, path, spec, flags, out) bind(C, name="zarr_mpi_f_create_from_spec") &
        result(st)
      import :: c_int, c_int32_t, c_char, c_ptr
      integer(c_int), value :: comm, flags
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: spec
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_create_from_spec
    function c_open(comm, path, mode, out) bind(C, name="zarr_mpi_f_open") result(st)
      import :: c_int, c_int32_t, c_char, c_ptr
      integer(c_int), value :: comm, mode
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: st
    end function c_open
    function c_balance_threads(comm, threads) bind(C, name="zarr_mpi_f_balance_threads") result(st)
      import :: c_int, c_int32_t, c_size_t
      integer(c_int), value :: comm
      integer(c_size_t), intent(out) :: threads
      integer(c_int32_t) :: st
    end function c_balance_threads
    function c_resize(comm, path, array, shape, rank) bind(C, name="zarr_mpi_f_resize") result(st)
      import :: c_int, c_int32_t, c_char, c_ptr, c_int64_t, c_size_t
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(inout) :: array
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_size_t), value :: rank
      integer(c_int32_t) :: st
    end function c_resize
    function c_decompose(comm, array, dims, grid, start, count, shared, rank) &
        bind(C, name="zarr_mpi_f_decompose") result(st)
      import :: c_int, c_int32_t, c_ptr, c_int64_t, c_size_t
      integer(c_int), value :: comm
      type(c_ptr), value :: array, dims
      integer(c_int), intent(out) :: grid(*), shared
      integer(c_int64_t), intent(out) :: start(*), count(*)
      integer(c_size_t), value :: rank
      integer(c_int32_t) :: st
    end function c_decompose
    function c_transfer(comm, array, buf, start, start_len, step, step_len, mode, buf_type, buf_elem) &
        bind(C, name="zarr_mpi_f_transfer") result(st)
      import :: c_int, c_int32_t, c_ptr, c_int64_t, c_size_t
      integer(c_int), value :: comm, mode
      type(c_ptr), value :: array
      type(*), dimension(..), intent(in) :: buf
      integer(c_int64_t), intent(in) :: start(*), step(*)
      integer(c_size_t), value :: start_len, step_len
      integer(c_int), value :: buf_type
      integer(c_size_t), value :: buf_elem
      integer(c_int32_t) :: st
    end function c_transfer
    function c_rank(comm) bind(C, name="zarr_mpi_f_rank") result(r)
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int) :: r
    end function c_rank
  end interface

contains

  ! ---- helpers -------------------------------------------------------------------------------------

  function c_str(s) result(c)
    character(*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    c = s // c_null_char
  end function c_str

  !> zarr_mpi_last_error() as a Fortran string.
  function last_error() result(s)
    character(:), allocatable :: s
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_last_error()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function last_error

  !> The outcome of a collective call into stat/errmsg; without stat, a failure stops (on every rank).
  subroutine report(st, what, stat, errmsg, comm)
    integer(c_int32_t), intent(in) :: st
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(inout) :: errmsg
    !> the communicator of a collective call (its outcome is the same on every rank: printed by rank 0 only)
    integer, intent(in), optional :: comm
    if (st == ZARR_OK) then
      errmsg = ''
    else
      errmsg = what // ': ' // last_error()
    end if
    if (present(stat)) then
      stat = int(st)
      return
    end if
    if (st /= ZARR_OK) then
      if (present(comm)) then
        if (c_rank(int(comm, c_int)) == 0) write(error_unit, '(a)') 'libzarr_mpi: ' // errmsg
      else
        write(error_unit, '(a)') 'libzarr_mpi: ' // errmsg
      end if
      error stop
    end if
  end subroutine report

  ! ---- collective procedures -----------------------------------------------------------------------

  !> Agrees on an outcome: every rank passes its own `local` status (and, optionally, the message that
  !> explains it); every rank gets the status of the lowest failing rank in `stat`, with that rank's
  !> message in errmsg. Collective.
  subroutine zarr_mpi_agree(comm, local, message, stat, errmsg)
    integer, intent(in) :: comm, local
    character(*), intent(in), optional :: message
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    if (present(message)) then
      st = c_agree(int(comm, c_int), int(local, c_int32_t), c_str(message))
    else
      st = c_agree(int(comm, c_int), int(local, c_int32_t), c_str('(no message)'))
    end if
    call report(st, 'zarr_mpi_agree', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_agree

  !> Creates an array collectively from a complete Zarr v3 metadata document (in Zarr's dimension order,
  !> the same on every rank): rank 0 writes it, the other ranks open the array after it. `array` must not
  !> be open; on success it is open for reading and writing on every rank. An array or group already at
  !> `path` fails every rank (ZARR_ERR_EXISTS) unless `clobber` is .true. (netCDF's NF90_CLOBBER): then it is
  !> replaced (zarr_mpi_create_with_flags() with ZARR_MPI_CLOBBER). Collective.
  subroutine zarr_mpi_create(comm, path, metadata_json, array, stat, errmsg, clobber)
    integer, intent(in) :: comm
    character(*), intent(in) :: path, metadata_json
    type(zarr_array_t), intent(inout) :: array
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    logical, intent(in), optional :: clobber
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    type(c_ptr) :: h
    st = local_check(comm, .not. array%is_open(), 'the array handle is open already')
    if (st == ZARR_OK) then
      st = c_create(int(comm, c_int), c_str(trim(path)), c_str(metadata_json), flags_of(clobber), h)
      if (st == ZARR_OK) call array%adopt_c_handle(h)
    end if
    call report(st, 'zarr_mpi_create(' // trim(path) // ')', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_create

  !> Creates an array collectively from keywords, as zarr_array_t%create(path, shape=, type=, ...) does
  !> on one process (same keywords, Fortran order, the same defaults): every rank passes the same
  !> values (their specs are compared: a difference fails every rank), rank 0 creates the array, the
  !> other ranks open it after it (zarr_mpi_create_from_spec() of zarr_mpi.h). `array` must not be
  !> open; on success it is open for reading and writing on every rank. `clobber`: as zarr_mpi_create.
  !> Collective.
  subroutine zarr_mpi_create_from_spec(comm, path, array, shape, type, chunks, shards, codec, level, shuffle, &
                                       fill, dimension_names, attributes, zarr_format, stat, errmsg, clobber)
    integer, intent(in) :: comm
    character(*), intent(in) :: path
    type(zarr_array_t), intent(inout) :: array
    class(*), intent(in) :: shape(:)
    integer, intent(in) :: type
    class(*), intent(in), optional :: chunks(:), shards(:), fill
    character(*), intent(in), optional :: codec, attributes
    integer, intent(in), optional :: level, shuffle, zarr_format
    character(*), intent(in), optional :: dimension_names(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    logical, intent(in), optional :: clobber
    character(:), allocatable :: zmsg, smsg
    integer(c_int32_t) :: st
    integer :: sst
    type(c_ptr) :: h, spec
    st = local_check(comm, .not. array%is_open(), 'the array handle is open already')
    if (st == ZARR_OK) then
      ! A bad keyword on one rank fails every rank, with that rank's message.
      call zarr_c_spec_new(spec, shape, type, chunks, shards, codec, level, shuffle, fill, dimension_names, &
                           attributes, zarr_format, stat=sst, errmsg=smsg)
      st = c_agree(int(comm, c_int), int(sst, c_int32_t), c_str(smsg))
      if (st == ZARR_OK) then
        st = c_create_from_spec(int(comm, c_int), c_str(trim(path)), spec, flags_of(clobber), h)
        if (st == ZARR_OK) call array%adopt_c_handle(h)
      end if
      call zarr_c_spec_free(spec)
    end if
    call report(st, 'zarr_mpi_create_from_spec(' // trim(path) // ')', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_create_from_spec

  !> The flags of zarr_mpi_create_with_flags() for the optional `clobber`.
  integer(c_int) function flags_of(clobber)
    logical, intent(in), optional :: clobber
    flags_of = 0
    if (present(clobber)) then
      if (clobber) flags_of = 1   ! ZARR_MPI_CLOBBER
    end if
  end function flags_of

  !> Opens an existing array on every rank; `mode` is ZARR_READ (the default) or ZARR_READ_WRITE, the
  !> same on every rank. `array` must not be open. Collective.
  subroutine zarr_mpi_open(comm, path, array, mode, stat, errmsg)
    integer, intent(in) :: comm
    character(*), intent(in) :: path
    type(zarr_array_t), intent(inout) :: array
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    integer(c_int) :: m
    type(c_ptr) :: h
    m = ZARR_READ
    if (present(mode)) m = int(mode, c_int)
    st = local_check(comm, .not. array%is_open(), 'the array handle is open already')
    if (st == ZARR_OK) then
      st = c_open(int(comm, c_int), c_str(trim(path)), m, h)
      if (st == ZARR_OK) call array%adopt_c_handle(h)
    end if
    call report(st, 'zarr_mpi_open(' // trim(path) // ')', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_open

  !> Closes every rank's handle once every rank has arrived (a closed handle: nothing to close on that
  !> rank). Collective.
  subroutine zarr_mpi_close(comm, array, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(inout) :: array
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg, cmsg
    integer(c_int32_t) :: st
    integer :: cst
    st = c_agree(int(comm, c_int), int(ZARR_OK, c_int32_t), c_str(''))
    if (st == ZARR_OK) then
      call array%close(stat=cst, errmsg=cmsg)
      st = c_agree(int(comm, c_int), int(cst, c_int32_t), c_str(cmsg))
    end if
    call report(st, 'zarr_mpi_close', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_close

  !> Changes the shape (Fortran order, integers of any kind, the same on every rank): rank 0 rewrites the
  !> metadata, the others reopen their handle from its new document (no storage read) so that it sees the
  !> new shape. Typical use: appending a time step. `path` may be left out (pass array= and shape= by
  !> keyword) for a handle of zarr_mpi_open / zarr_mpi_create*, which knows it. Collective.
  subroutine zarr_mpi_resize(comm, path, array, shape, stat, errmsg)
    integer, intent(in) :: comm
    character(*), intent(in), optional :: path
    type(zarr_array_t), intent(inout) :: array
    class(*), intent(in) :: shape(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg, what
    integer(c_int32_t) :: st
    integer(c_int64_t) :: cshape(32)
    logical :: ok
    type(c_ptr) :: h
    what = 'zarr_mpi_resize'
    if (present(path)) what = what // '(' // trim(path) // ')'
    cshape = 0
    call to_int64(shape, cshape, ok)
    if (.not. ok) then
      st = c_agree(int(comm, c_int), ZARR_ERR_INVALID_ARGUMENT, c_str('shape is an integer array (of any kind)'))
    else
      call array%release_c_handle(h)
      if (present(path)) then
        st = c_resize(int(comm, c_int), c_str(trim(path)), h, cshape, int(size(shape), c_size_t))
      else
        st = c_resize(int(comm, c_int), c_str(''), h, cshape, int(size(shape), c_size_t))
      end if
      if (c_associated(h)) call array%adopt_c_handle(h)
    end if
    call report(st, what, stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_resize

  !> Writes this rank's block `buf` (any rank up to the array's; its extents are the counts, missing
  !> trailing dimensions count 1) at `start` (1-based, Fortran order, one value per array dimension;
  !> default all 1), then agrees. Independent I/O underneath (zarr_write_hyperslab), encoded in this
  !> rank's thread pool. Collective.
  subroutine zarr_mpi_write_block(comm, array, buf, start, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    class(*), dimension(..), intent(in) :: buf
    class(*), intent(in), optional :: start(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = transfer_all(comm, array, buf, start, mode=1)
    call report(st, 'zarr_mpi_write_block', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_write_block

  !> Reads the block at `start` into `buf` (as zarr_mpi_write_block; any rank may read any block).
  !> Collective.
  subroutine zarr_mpi_read_block(comm, array, buf, start, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    class(*), dimension(..), intent(inout) :: buf
    class(*), intent(in), optional :: start(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = transfer_all(comm, array, buf, start, mode=0)
    call report(st, 'zarr_mpi_read_block', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_read_block

  !> Collective write of any decomposition (two-phase aggregation, zarr_mpi_write_all() of zarr_mpi.h):
  !> each rank passes its own block `buf` (an array section in place: a block inside an array with halo
  !> cells needs no copy) at `start` (1-based, Fortran order; default all 1), every `step`-th element
  !> along each dimension (default all 1); the blocks may split shards any way and a rank may pass an
  !> empty buffer. Each shard is assembled by one aggregator rank and stored once, without locks. Two
  !> ranks writing the same element is an error on every rank, before anything is written. Collective.
  subroutine zarr_mpi_write_all(comm, array, buf, start, step, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    class(*), dimension(..), intent(in) :: buf
    class(*), intent(in), optional :: start(:), step(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = transfer_all(comm, array, buf, start, step, 3)
    call report(st, 'zarr_mpi_write_all', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_write_all

  !> Collective read of any decomposition (zarr_mpi_read_all()): each shard is read and decoded once, by
  !> its aggregator, and every rank receives its block `buf` at `start` (every `step`-th element; as
  !> zarr_mpi_write_all; blocks of different ranks may overlap). Collective.
  subroutine zarr_mpi_read_all(comm, array, buf, start, step, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    class(*), dimension(..), intent(inout) :: buf
    class(*), intent(in), optional :: start(:), step(:)
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    st = transfer_all(comm, array, buf, start, step, 2)
    call report(st, 'zarr_mpi_read_all', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_read_all

  !> zarr_mpi_f_transfer with the optional start and step, of any integer kind (a start vector serves
  !> the serial a%write and these calls alike). A start or step that is not an integer array fails every
  !> rank alike (the agreement it takes part in is the first step of zarr_mpi_f_transfer on the others).
  function transfer_all(comm, array, buf, start, step, mode) result(st)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    class(*), dimension(..), intent(in) :: buf
    class(*), intent(in), optional :: start(:), step(:)
    integer, intent(in) :: mode
    integer(c_int32_t) :: st
    integer(c_int64_t) :: cstart(32), cstep(32)   ! (libzarr_mpi: arrays of rank 32 at most)
    integer(c_size_t) :: nstart, nstep
    logical :: ok
    nstart = 0
    nstep = 0
    cstart = 1
    cstep = 1
    ok = .true.
    if (present(start)) then
      nstart = size(start, kind=c_size_t)
      call to_int64(start, cstart, ok)
    end if
    if (present(step) .and. ok) then
      nstep = size(step, kind=c_size_t)
      call to_int64(step, cstep, ok)
    end if
    if (.not. ok) then
      st = c_agree(int(comm, c_int), ZARR_ERR_INVALID_ARGUMENT, &
                   c_str('start and step are integer arrays (of any kind)'))
      return
    end if
    st = c_transfer(int(comm, c_int), array%c_handle(), buf, cstart, nstart, cstep, nstep, int(mode, c_int), &
                    buffer_type(buf), int(storage_size(buf) / 8, c_size_t))
  end function transfer_all

  !> The zarr type of a buffer's elements, or -2 (character), -3 (default logical), -1 (another type).
  !> The public procedures take buffers as class(*), not type(*): gfortran (12) passes a character actual
  !> argument of an assumed-type dummy with a hidden length that the callee does not expect (and then takes
  !> for errmsg's), so a character buffer crashed the call. A class(*) dummy carries its type, which is
  !> found here by comparison with a value of each kind (same_type_as of unlimited polymorphic objects; for
  !> intrinsic types its result is the processor's, gfortran's compares type and kind), and handed to C
  !> with the element size: the C descriptor made from a class(*) object does not say them.
  function buffer_type(buf) result(t)
    class(*), dimension(..), intent(in) :: buf
    integer(c_int) :: t
    class(*), allocatable :: probe
    t = -1
    probe = 1_int8
    if (same_type_as(buf, probe)) t = ZARR_INT8
    probe = 1_int16
    if (same_type_as(buf, probe)) t = ZARR_INT16
    probe = 1_int32
    if (same_type_as(buf, probe)) t = ZARR_INT32
    probe = 1_int64
    if (same_type_as(buf, probe)) t = ZARR_INT64
    probe = 1.0_real32
    if (same_type_as(buf, probe)) t = ZARR_FLOAT32
    probe = 1.0_real64
    if (same_type_as(buf, probe)) t = ZARR_FLOAT64
    probe = (1.0_real32, 0.0_real32)
    if (same_type_as(buf, probe)) t = ZARR_COMPLEX64
    probe = (1.0_real64, 0.0_real64)
    if (same_type_as(buf, probe)) t = ZARR_COMPLEX128
    probe = .true._c_bool
    if (same_type_as(buf, probe)) t = ZARR_BOOL
    probe = 'a'
    if (same_type_as(buf, probe)) t = -2
    probe = .true.
    if (same_type_as(buf, probe)) t = -3
  end function buffer_type

  !> The first 32 values of an integer array of any kind, as integer(int64); ok false for another type.
  subroutine to_int64(x, out, ok)
    class(*), intent(in) :: x(:)
    integer(c_int64_t), intent(inout) :: out(32)
    logical, intent(out) :: ok
    integer :: n
    n = min(size(x), 32)
    ok = .true.
    select type (x)
    type is (integer(int8))
      out(1:n) = int(x(1:n), c_int64_t)
    type is (integer(int16))
      out(1:n) = int(x(1:n), c_int64_t)
    type is (integer(int32))
      out(1:n) = int(x(1:n), c_int64_t)
    type is (integer(int64))
      out(1:n) = int(x(1:n), c_int64_t)
    class default
      ok = .false.
    end select
  end subroutine to_int64

  !> Shares the node's cores out among the ranks on it (libzarr threads per rank). Collective.
  subroutine zarr_mpi_balance_threads(comm, threads, stat, errmsg)
    integer, intent(in) :: comm
    integer, intent(out), optional :: threads
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    integer(c_size_t) :: n
    n = 0
    st = c_balance_threads(int(comm, c_int), n)
    if (present(threads)) threads = int(n)
    call report(st, 'zarr_mpi_balance_threads', stat, zmsg, comm)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_balance_threads

  ! ---- not collective ------------------------------------------------------------------------------

  !> This rank's block for the ranks of `comm`: start (1-based) and count, Fortran order, one value per
  !> array dimension. Blocks are balanced and aligned to the shards (the chunks when not sharded);
  !> `dims` (Fortran order, 0 = free) fixes the process grid along some dimensions, `grid` receives the
  !> grid used, `shared` whether some shard (chunk) is split between ranks (writes then need libzarr's
  !> shard locking). Not collective: every rank computes its own block.
  subroutine zarr_mpi_decompose(comm, array, start, count, dims, grid, shared, stat, errmsg)
    integer, intent(in) :: comm
    type(zarr_array_t), intent(in) :: array
    integer(int64), intent(out) :: start(:), count(:)
    integer, intent(in), optional, target :: dims(:)
    integer, intent(out), optional :: grid(:)
    logical, intent(out), optional :: shared
    integer, intent(out), optional :: stat
    character(:), allocatable, intent(out), optional :: errmsg
    character(:), allocatable :: zmsg
    integer(c_int32_t) :: st
    integer(c_int), allocatable, target :: cdims(:)
    integer(c_int) :: cgrid(size(start)), cshared
    integer(c_int64_t) :: cstart(size(start)), ccount(size(start))
    type(c_ptr) :: pdims
    integer :: r
    r = array%rank(stat=st)
    if (st == ZARR_OK .and. (size(start) /= r .or. size(count) /= r)) st = ZARR_ERR_INVALID_ARGUMENT
    if (st == ZARR_OK .and. present(dims)) then
      if (size(dims) /= r) st = ZARR_ERR_INVALID_ARGUMENT
    end if
    if (st == ZARR_OK .and. present(grid)) then
      if (size(grid) /= r) st = ZARR_ERR_INVALID_ARGUMENT
    end if
    if (st /= ZARR_OK) then
      errmsg_local: block
        zmsg = 'zarr_mpi_decompose: start, count, dims and grid need one value per array dimension'
        if (present(stat)) then
          stat = int(st)
        else
          write(error_unit, '(a)') 'libzarr_mpi: ' // zmsg
          error stop
        end if
      end block errmsg_local
      if (present(errmsg)) errmsg = zmsg
      return
    end if
    pdims = c_null_ptr
    if (present(dims)) then
      cdims = int(dims, c_int)
      pdims = c_loc(cdims)
    end if
    st = c_decompose(int(comm, c_int), array%c_handle(), pdims, cgrid, cstart, ccount, cshared, int(r, c_size_t))
    if (st == ZARR_OK) then
      start = cstart
      count = ccount
      if (present(grid)) grid = int(cgrid)
      if (present(shared)) shared = cshared /= 0
    end if
    call report(st, 'zarr_mpi_decompose', stat, zmsg)
    if (present(errmsg)) errmsg = zmsg
  end subroutine zarr_mpi_decompose

  !> A check on this rank before a collective call, agreed by every rank (so that a bad argument on one
  !> rank fails every rank instead of leaving them in different collectives).
  function local_check(comm, ok, message) result(st)
    integer, intent(in) :: comm
    logical, intent(in) :: ok
    character(*), intent(in) :: message
    integer(c_int32_t) :: st
    st = ZARR_OK
    if (.not. ok) st = ZARR_ERR_INVALID_ARGUMENT
    st = c_agree(int(comm, c_int), st, c_str(message))
  end function local_check
end module zarr_mpi
