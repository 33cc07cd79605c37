/* scatter algorithms (one file each) and their cost functions. */
#ifndef WSP_COLL_SCATTER_H
#define WSP_COLL_SCATTER_H

#include "../coll_internal.h"

int wsp__scatter_linear(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__scatter_linear_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                wsp__coll_tune_t *t);
int wsp__scatter_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a);
double wsp__scatter_binomial_cost(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                  wsp__coll_tune_t *t);

#endif
