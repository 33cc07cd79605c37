/* gather algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_GATHER_H
#define WSP_COLL_GATHER_H

#include "../coll_internal.h"

int wsp__gather_linear(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__gather_linear_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                               wsp__coll_tune_t *t);
int wsp__gather_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__gather_binomial_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                 wsp__coll_tune_t *t);

#endif
