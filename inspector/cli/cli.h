/* cli.h: what the `gradscope` commands share: reading a log with a progress bar and the
 * standard warnings, and the one-line error convention (exit 1 for bad input, 2 for a damaged
 * log whose valid part was still used). */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

#include "graph.h"
#include "rank-logs.h"
#include "trace-file.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define CLI_EXIT_DAMAGED 2

/* Each command: argv[0] is the command's name. Returns the process exit status. */
int cli_record(int argc, char **argv);
int cli_stats(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_export_dot(int argc, char **argv);
int cli_export_timeline(int argc, char **argv);
int cli_chrome_trace(int argc, char **argv);
int cli_export_graph(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_state(int argc, char **argv);
/* explain --list-tours and explain --tour NAME [LOG] (explain-tour.c). log_path NULL: run the
 * tour's program and read its fresh log. */
int cli_list_tours(void);
int cli_explain_tour(const char *name, const char *log_path);

/* Adds --at EVENT and --backward N (the moment of a graph) to context's options. */
void cli_add_moment_options(GOptionContext *context, char **at_text, char **backward_text);

/* The graph at event seq at_text, or at the start of backward pass number backward_text (from
 * 1), or (both NULL) at the last node_create of the log at path, built as the inspector's
 * graph view builds it; *at is the seq used. For a damaged or truncated log
 * *warning says what is wrong (print it with cli_warn_damaged after the output), else NULL.
 * NULL after printing why (command names the command in messages); a picture command is
 * refused a log with no events, a text one gets a note. */
gs_graph *cli_graph_at(const char *command, gboolean picture, const char *path,
                       const char *at_text, const char *backward_text, guint64 *at,
                       char **warning);
/* Prints "gradscope: warning: WARNING" after flushing stdout; returns CLI_EXIT_DAMAGED, or 0
 * if warning is NULL. */
int cli_warn_damaged(const char *warning);

/* Prints "gradscope: MESSAGE" on one line to stderr. */
void cli_error(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* context's option descriptions and parameter names (marked N_()) in the user's language in
 * --help; call before adding them. */
void cli_translate_options(GOptionContext *context);

/* A command's options: its parameters ("FILE"), its own options (entries) and the summary
 * --help shows. */
GOptionContext *cli_option_context(const char *parameters, const GOptionEntry *entries,
                                   const char *summary);

/* Parses argv with context (which gets --help), then requires exactly one FILE argument.
 * Returns the file or NULL after printing why; argv is left with the command name only. */
const char *cli_parse_file_args(GOptionContext *context, int *argc, char ***argv);

/* As cli_parse_file_args, for commands that take one FILE or several (the ranks of one run):
 * returns how many (argv[1] on), or -1 after printing why. */
int cli_parse_files_args(GOptionContext *context, int *argc, char ***argv);

/* Reads path through the reader, with a progress bar on a terminal. Returns FALSE after
 * printing the reason if the file cannot be read; result says whether it was damaged. */
gboolean cli_read_log(const char *path, gs_trace_event_fn on_event, gpointer user_data,
                      gs_trace_read_result *result);

/* Prints the one note every command gives for a log with a header (and maybe strings) but no
 * events: text commands go on (empty output), picture commands refuse (nothing to draw).
 * cli_read_log gives it itself. */
void cli_note_no_events(const char *path);
/* One note on stderr when the replay stepped over inconsistencies in the log (none if not). */
void cli_note_warnings(const gs_replay *state);

/* Prints the warning for a damaged or truncated log, if any: returns 0, or 2 if it warned. */
int cli_report_damage(const gs_trace_read_result *result);
/* Reports that path holds no log: empty, not a Gradscope log, or a header cut short (the
 * same sentence in every command and the inspector: gs_trace_file_not_a_log), else what the
 * reader found (problem, taken over). */
void cli_not_a_log(const char *path, char *problem);
/* Loads path into a model, with a progress bar on a terminal. Returns NULL after reporting
 * (as "command: ...") if the file cannot be read, or if it yielded no events because it is
 * not a log (cli_not_a_log). A model with no events and no problem (a log header alone) is
 * returned: what that means is the command's to say. */
gs_trace_model *cli_load_model(const char *command, const char *path);

/* text with control characters escaped (\n, \033...) so user names cannot break a line or
 * drive the terminal; quotes, backslashes and UTF-8 are kept as they are. Free with g_free. */
char *cli_printable(const char *text);

/* "1.5 MiB (1572864 bytes)", translated; free with g_free. */
char *cli_format_bytes(guint64 bytes);

/* text padded with spaces to width terminal columns (a wide character takes two), on the
 * left if right, for translated table headings printf's %9s would pad by bytes. */
char *cli_align(const char *text, int width, gboolean right);

/* ---- several ranks' logs (rank-logs.c) ------------------------------------------------ */

/* A log as a rank of a distributed run (model/index/rank-logs.h). */
typedef gs_rank_log cli_rank_log;

/* Each of the n paths with its dist_init (only a log's start is read). NULL after reporting
 * (as "command: ...") a file that cannot be read. Free with g_array_unref. */
GArray *cli_rank_logs_read(const char *command, char **paths, int n);
/* Whether logs are ranks of one run: each has a dist_init, all the same run id, no rank
 * twice; they are then sorted by rank. FALSE after an error naming the files. */
gboolean cli_rank_logs_one_run(const char *command, GArray *logs);

/* ---- progress bar (stderr, only when it is a terminal) ---------------------------------- */

typedef struct cli_progress cli_progress;
cli_progress *cli_progress_new(const char *label);
void cli_progress_update(guint64 done, guint64 total, gpointer progress);
/* Erases the bar, so what follows on stderr starts on a clean line. */
void cli_progress_free(cli_progress *progress);

G_END_DECLS
