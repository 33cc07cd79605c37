! SPDX-License-Identifier: BSD-3-Clause
! The shim's Fortran test: a program that knows nothing of wirespeed,
! through `use mpi` (or `use mpi_f08` when built with -DWSP_F08, mpif.h
! with -DWSP_MPIFH: each has its own MPI_IN_PLACE in MPICH). It calls
! bcast, reduce (MPI_IN_PLACE at the root), allreduce (plain and with
! MPI_IN_PLACE), allgather, gather and scatter (each plain and with
! MPI_IN_PLACE at the root), alltoall, alltoallv, allgatherv (in place)
! and reduce_scatter on 20000 doubles (160 KB: above the shim's auto
! threshold; a rank's block for the last eight, in all) and checks
! each result against values it computes itself. Exit status 1 on any
! failure (rank 0: on any rank's).
program shim_f
#if defined(WSP_F08)
  use mpi_f08
#elif !defined(WSP_MPIFH)
  use mpi
#endif
  implicit none
#ifdef WSP_MPIFH
  include 'mpif.h'
#endif
  integer, parameter :: n = 20000
  double precision, allocatable :: a(:), b(:), want(:)
  integer :: ierr, rank, p, i, s, root, failures, all, got
  allocate(a(n), b(n), want(n))
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  failures = 0
  root = mod(1, p)

  ! bcast from root
  do i = 1, n
    a(i) = merge(val(root, i), -1d0, rank == root)
  end do
  call MPI_Bcast(a, n, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (a(i) /= val(root, i)) failures = failures + 1
  end do

  ! allreduce, then in place
  do i = 1, n
    a(i) = val(rank, i)
    want(i) = 0
    do s = 0, p - 1
      want(i) = want(i) + val(s, i)
    end do
  end do
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) failures = failures + 1
  do i = 1, n
    if (b(i) /= want(i)) failures = failures + 1
  end do
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (a(i) /= want(i)) failures = failures + 1
  end do

  ! reduce with MPI_IN_PLACE at the root
  do i = 1, n
    a(i) = val(rank, i)
  end do
  if (rank == root) then
    call MPI_Reduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    do i = 1, n
      if (a(i) /= want(i)) failures = failures + 1
    end do
  else
    call MPI_Reduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, MPI_COMM_WORLD, ierr)
  end if

  ! allgather of n/p-element blocks
  block
    integer :: m
    double precision, allocatable :: g(:)
    m = n / p
    allocate(g(m * p))
    do i = 1, m
      a(i) = val(rank + 2, i)
    end do
    call MPI_Allgather(a, m, MPI_DOUBLE_PRECISION, g, m, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, ierr)
    do s = 0, p - 1
      do i = 1, m
        if (g(s * m + i) /= val(s + 2, i)) failures = failures + 1
      end do
    end do
  end block

  ! gather and scatter of m-element blocks, each plain and then with
  ! MPI_IN_PLACE at the root (the root's block already in place)
  block
    integer :: m, k
    double precision, allocatable :: g(:)
    m = n / p
    allocate(g(m * p))
    do k = 0, 1
      do i = 1, m
        a(i) = val(rank + 5, i)
      end do
      g = -1
      if (rank == root .and. k == 1) then
        g(root * m + 1:root * m + m) = a(1:m)
        call MPI_Gather(MPI_IN_PLACE, m, MPI_DOUBLE_PRECISION, g, m, MPI_DOUBLE_PRECISION, &
                        root, MPI_COMM_WORLD, ierr)
      else
        call MPI_Gather(a, m, MPI_DOUBLE_PRECISION, g, m, MPI_DOUBLE_PRECISION, &
                        root, MPI_COMM_WORLD, ierr)
      end if
      if (rank == root) then
        do s = 0, p - 1
          do i = 1, m
            if (g(s * m + i) /= val(s + 5, i)) failures = failures + 1
          end do
        end do
      end if
    end do
    do k = 0, 1
      if (rank == root) then
        do s = 0, p - 1
          do i = 1, m
            g(s * m + i) = val(s + 9, i)
          end do
        end do
      end if
      b(1:m) = -1
      if (rank == root .and. k == 1) then
        call MPI_Scatter(g, m, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, m, MPI_DOUBLE_PRECISION, &
                         root, MPI_COMM_WORLD, ierr)
        b(1:m) = g(root * m + 1:root * m + m)
      else
        call MPI_Scatter(g, m, MPI_DOUBLE_PRECISION, b, m, MPI_DOUBLE_PRECISION, &
                         root, MPI_COMM_WORLD, ierr)
      end if
      do i = 1, m
        if (b(i) /= val(rank + 9, i)) failures = failures + 1
      end do
    end do
  end block

  ! alltoall: block s of rank r holds val(100 r + s)
  block
    integer :: m
    double precision, allocatable :: g(:), h(:)
    m = n / p
    allocate(g(m * p), h(m * p))
    do s = 0, p - 1
      do i = 1, m
        g(s * m + i) = val(100 * rank + s, i)
      end do
    end do
    call MPI_Alltoall(g, m, MPI_DOUBLE_PRECISION, h, m, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
    do s = 0, p - 1
      do i = 1, m
        if (h(s * m + i) /= val(100 * s + rank, i)) failures = failures + 1
      end do
    end do
  end block

  ! alltoallv with the alltoall's blocks laid out in reverse rank order,
  ! allgatherv (in place) of blocks of (s + 1).k, and reduce_scatter of
  ! sums, rank s getting (s + 1).k elements
  block
    integer :: m, k, at
    integer, allocatable :: cnt(:), dsp(:)
    double precision, allocatable :: g(:), h(:)
    m = n / p
    k = n / (p * (p + 1))
    allocate(g(n), h(n), cnt(0:p - 1), dsp(0:p - 1))
    do s = 0, p - 1
      cnt(s) = m
      dsp(s) = (p - 1 - s) * m
      do i = 1, m
        g(dsp(s) + i) = val(100 * rank + s, i)
      end do
    end do
    call MPI_Alltoallv(g, cnt, dsp, MPI_DOUBLE_PRECISION, h, cnt, dsp, &
                       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    do s = 0, p - 1
      do i = 1, m
        if (h(dsp(s) + i) /= val(100 * s + rank, i)) failures = failures + 1
      end do
    end do
    at = 0
    do s = 0, p - 1
      cnt(s) = (s + 1) * k
      dsp(s) = at
      at = at + cnt(s)
    end do
    do i = 1, cnt(rank)
      h(dsp(rank) + i) = val(rank + 9, i)
    end do
    call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h, cnt, dsp, &
                        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    do s = 0, p - 1
      do i = 1, cnt(s)
        if (h(dsp(s) + i) /= val(s + 9, i)) failures = failures + 1
      end do
    end do
    do i = 1, at
      g(i) = val(rank + 2, i)
    end do
    call MPI_Reduce_scatter(g, h, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, cnt(rank)
      if (h(i) /= sum([(val(s + 2, dsp(rank) + i), s = 0, p - 1)])) failures = failures + 1
    end do
  end block

  ! The verdict: every rank's failures, summed at rank 0 by point-to-point
  ! messages. Not by MPI_Allreduce, which the shim takes (an allreduce that
  ! returned success without writing would report none), nor by
  ! PMPI_ALLREDUCE, whose binding in MPICH calls the C MPI_Allreduce, the
  ! shim's. The other ranks end with their own count.
  all = failures
  if (rank == 0) then
    do s = 1, p - 1
      call MPI_Recv(got, 1, MPI_INTEGER, s, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      all = all + got
    end do
  else
    call MPI_Send(failures, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) print '(a, i0, a)', 'shim_f: ', all, ' failures'
  deallocate(a, b, want)
  call MPI_Finalize(ierr)
  if (all /= 0) error stop 1

contains

  double precision function val(r, i)
    integer, intent(in) :: r, i
    val = dble(mod(r * 7 + i * 3, 101))
  end function val

end program shim_f
