/* alltoall algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_ALLTOALL_H
#define WSP_COLL_ALLTOALL_H

#include "../coll_internal.h"

int wsp__alltoall_pairwise(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__alltoall_pairwise_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                   wsp__coll_tune_t *t);
int wsp__alltoall_bruck(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__alltoall_bruck_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                wsp__coll_tune_t *t);
int wsp__alltoall_linear(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__alltoall_linear_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                 wsp__coll_tune_t *t);

#endif
