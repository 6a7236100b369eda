/* sql/bundle.h — the migration files embedded at build time.
 * cmake/embed_migrations.cmake generates the definitions from migrations/;
 * each table ends with a {0, 0, 0} sentinel not counted in *_count. */
#ifndef ADCP_SQL_BUNDLE_H
#define ADCP_SQL_BUNDLE_H

#include "adcp/sql.h"

extern const adcp_sql_file adcp_bundle_postgres_files[];
extern const size_t adcp_bundle_postgres_files_count;
extern const adcp_sql_file adcp_bundle_postgres_assets[];
extern const size_t adcp_bundle_postgres_assets_count;
extern const adcp_sql_file adcp_bundle_sqlite_files[];
extern const size_t adcp_bundle_sqlite_files_count;
extern const adcp_sql_file adcp_bundle_sqlite_assets[];
extern const size_t adcp_bundle_sqlite_assets_count;

#endif
