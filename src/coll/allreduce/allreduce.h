/* allreduce algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_ALLREDUCE_H
#define WSP_COLL_ALLREDUCE_H

#include "../coll_internal.h"

int wsp__allreduce_recursive_doubling(wsp_comm_t *comm,
                                      const wsp__coll_args_t *a);
double wsp__allreduce_recursive_doubling_cost(const wsp_model_t *m,
                                              const wsp__coll_shape_t *s,
                                              wsp__coll_tune_t *t);
int wsp__allreduce_ring(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__allreduce_ring_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                wsp__coll_tune_t *t);
int wsp__allreduce_rabenseifner(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__allreduce_rabenseifner_cost(const wsp_model_t *m,
                                        const wsp__coll_shape_t *s,
                                        wsp__coll_tune_t *t);
int wsp__allreduce_hier(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__allreduce_hier_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                wsp__coll_tune_t *t);

#endif
