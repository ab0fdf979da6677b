# Installs this build into a private prefix, then configures, builds and runs the consumer
# project against it, as a user of find_package(dibs) would.
set(prefix "${BUILD}/consumer-prefix")
# The internal headers named by the consumer's check must still be headers of the source tree.
include(${SOURCE}/internal_headers.cmake)
foreach(header IN LISTS dibs_internal_headers)
  if(NOT EXISTS "${SOURCE}/../../${header}")
    message(FATAL_ERROR "tests/consumer/internal_headers.cmake names ${header}, which is not in the source tree")
  endif()
endforeach()
set(work "${BUILD}/consumer-build")
file(REMOVE_RECURSE "${prefix}" "${work}")
# The test MariaDB's URI, when the test runs beside it (MYSQL_URI_FILE): the consumer then runs a
# SQL store too.
set(mysql_uri "")
if(DEFINED MYSQL_URI_FILE AND EXISTS "${MYSQL_URI_FILE}")
  file(STRINGS "${MYSQL_URI_FILE}" mysql_uri LIMIT_COUNT 1)
endif()
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD};--prefix;${prefix}"
    "${CMAKE_COMMAND};-S;${SOURCE};-B;${work};-G;Ninja;-DCMAKE_PREFIX_PATH=${prefix};-DCMAKE_BUILD_TYPE=Release"
    "${CMAKE_COMMAND};--build;${work}"
    "${CMAKE_COMMAND};-E;env;DIBS_CONSUMER_MYSQL_URI=${mysql_uri};${work}/consumer;${work}")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${step}\n${out}\n${err}")
  endif()
  # A consumer build prints no warning from dibs's headers (nor from the library headers they include).
  if(step MATCHES "--build" AND "${out}${err}" MATCHES "warning:")
    message(FATAL_ERROR "the consumer build printed warnings:\n${out}\n${err}")
  endif()
endforeach()
if(NOT out MATCHES "consumer: summary: completed=1000 " OR NOT out MATCHES "consumer: async_run: summary: completed=500 [^\n]* ended=drained"
   OR NOT out MATCHES "consumer: file mode: [^\n]*OUT has 40 answered lines")
  message(FATAL_ERROR "unexpected consumer output: ${out}")
endif()
if(NOT mysql_uri STREQUAL "" AND NOT out MATCHES "consumer: sql: [^\n]*store: done=30 pending=0")
  message(FATAL_ERROR "unexpected consumer output (SQL store): ${out}")
endif()
if(NOT EXISTS "${prefix}/bin/dibs" OR NOT EXISTS "${prefix}/include/dibs/engine.hpp")
  message(FATAL_ERROR "the CLI or the headers were not installed")
endif()
# The public include folder is exactly what is installed: the source tree's include/ and the
# prefix's include/, file for file.
file(GLOB_RECURSE source_headers RELATIVE "${SOURCE}/../../include" "${SOURCE}/../../include/*")
file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
list(SORT source_headers)
list(SORT installed_headers)
if(NOT source_headers STREQUAL installed_headers)
  message(FATAL_ERROR "installed include/ differs from the source tree's include/:\n"
                      "source:    ${source_headers}\ninstalled: ${installed_headers}")
endif()
