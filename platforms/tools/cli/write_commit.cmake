# Writes OUT, a header defining FABRICSIM_COMMIT: the commit checked out in
# SRC when fabricsim is built (not when it was configured), with "-dirty"
# when tracked files differ from it, or "unknown" outside a git checkout.
# The file is rewritten only when the text changes, so an unchanged commit
# rebuilds nothing.
# (A source tree unpacked inside another checkout is not that checkout's
# commit: the top level must be SRC itself.)
execute_process(COMMAND git rev-parse --show-toplevel WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(NOT failed)
  get_filename_component(top "${top}" REALPATH)
  get_filename_component(src "${SRC}" REALPATH)
  if(NOT top STREQUAL src)
    set(failed 1)
  endif()
endif()
if(NOT failed)
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
endif()
if(failed OR NOT commit)
  set(commit unknown)
else()
  # --no-optional-locks: a build must not take the index lock from a user's
  # git command running meanwhile.
  execute_process(COMMAND git --no-optional-locks status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE changes ERROR_QUIET RESULT_VARIABLE failed)
  if(NOT failed AND changes)
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "// Written at build time by platforms/tools/cli/write_commit.cmake.\n#define FABRICSIM_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
