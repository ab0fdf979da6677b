# Headers that are not part of the installed API (as a consumer would include them): the package
# must not install them. check.cmake also checks that each is still a header of the source tree,
# so a renamed one can't leave this list checking nothing.
set(dibs_internal_headers
  dibs/close_on_exec.hpp
  dibs/uri_redact.hpp
  dibs/json_text.hpp
  dibs/log_escape.hpp
  dibs/reason_text.hpp
  dibs/async_event.hpp
  adapters/http/json_check.hpp
  adapters/http/batch_answer.hpp
  adapters/http/control_access.hpp
  adapters/http/endpoint_refresh.hpp
  adapters/http/tls_context.hpp
  adapters/jsonl/journal_file.hpp
  adapters/jsonl/journal_format.hpp
  adapters/jsonl/json_members.hpp
  adapters/jsonl/private_file.hpp
  adapters/mysql/sql_protocol.hpp
  adapters/mysql/server_limits.hpp
  adapters/mysql/fenced_rows.hpp
  adapters/mysql/claimed_rows.hpp
  adapters/mysql/mysql_uri.hpp
  adapters/mysql/mysql_tls.hpp
  adapters/mongo/protocol.hpp
  adapters/mongo/json_to_bson.hpp
  adapters/mongo/bson_read.hpp
  adapters/mongo/ids.hpp
  adapters/mongo/server_clock.hpp
  adapters/mongo/driver_log.hpp
  adapters/mongo/write_concern.hpp
  adapters/mongo/write_errors.hpp
  adapters/mongo/bson_ptr.hpp
  adapters/mongo/driver_handles.hpp
  adapters/mongo/test_hooks.hpp
  adapters/mongo/claimer.hpp
  adapters/mongo/lease_verdicts.hpp)
