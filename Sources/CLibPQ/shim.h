#ifndef SGEM_CLIBPQ_SHIM_H
#define SGEM_CLIBPQ_SHIM_H
/* Debian's libpq-dev puts the header in /usr/include/postgresql; pkg-config libpq adds that path. */
#include <libpq-fe.h>
#endif
