/* reduce algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_REDUCE_H
#define WSP_COLL_REDUCE_H

#include "../coll_internal.h"

int wsp__reduce_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__reduce_binomial_cost(const wsp_model_t *m,
                                 const wsp__coll_shape_t *s,
                                 wsp__coll_tune_t *t);
int wsp__reduce_chain(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__reduce_chain_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                              wsp__coll_tune_t *t);
int wsp__reduce_rabenseifner(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__reduce_rabenseifner_cost(const wsp_model_t *m,
                                     const wsp__coll_shape_t *s,
                                     wsp__coll_tune_t *t);

#endif
