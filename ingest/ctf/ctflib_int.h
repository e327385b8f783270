/* ingest/ctf/ctflib_int.h -- libbabeltrace2, loaded when a CTF trace is
 * read, not when argusq starts.
 *
 * For the reason ingest/ftrace/tracelib_int.h gives (most runs of argusq
 * are one-shot queries, and loading a library and its glib costs each of
 * them), the library is opened with dlopen by its soname, the ABI of the
 * Debian libbabeltrace2-dev headers we compile against, and every function
 * the CTF reader calls is reached through the table below.  The headers'
 * static inline helpers (bt_field_class_type_is, bt_value_is_*) would
 * call the library directly, so the reader does not use them.
 *
 * The library stays mapped to the end of the process (RTLD_NODELETE):
 * the plugins it loads keep a few allocations of their own. */
#ifndef ARGUSQ_INGEST_CTFLIB_INT_H
#define ARGUSQ_INGEST_CTFLIB_INT_H

#include <stddef.h>

#include <babeltrace2/babeltrace.h>

/* every function argusq calls */
#define INGEST_CTFLIB_FUNCS(X)                                                                          \
    X(bt_logging_set_global_level) X(bt_plugin_find) X(bt_plugin_put_ref)                                \
    X(bt_plugin_borrow_source_component_class_by_name_const)                                            \
    X(bt_plugin_borrow_filter_component_class_by_name_const)                                            \
    X(bt_graph_create) X(bt_graph_put_ref) X(bt_graph_add_source_component)                              \
    X(bt_graph_add_filter_component) X(bt_graph_add_simple_sink_component) X(bt_graph_connect_ports)     \
    X(bt_graph_run) X(bt_component_source_get_output_port_count)                                        \
    X(bt_component_source_borrow_output_port_by_index_const)                                            \
    X(bt_component_filter_borrow_input_port_by_index_const)                                             \
    X(bt_component_filter_get_input_port_count)                                                         \
    X(bt_component_filter_borrow_output_port_by_index_const)                                            \
    X(bt_component_sink_borrow_input_port_by_index_const)                                               \
    X(bt_value_map_create) X(bt_value_array_create) X(bt_value_array_append_string_element)              \
    X(bt_value_map_insert_entry) X(bt_value_put_ref) X(bt_value_get_type) X(bt_value_string_get)         \
    X(bt_value_integer_signed_get) X(bt_value_integer_unsigned_get)                                     \
    X(bt_message_iterator_next) X(bt_message_get_ref) X(bt_message_put_ref) X(bt_message_get_type)       \
    X(bt_message_event_borrow_event_const) X(bt_message_event_borrow_default_clock_snapshot_const)       \
    X(bt_message_stream_beginning_borrow_stream_const) X(bt_clock_snapshot_get_ns_from_origin)          \
    X(bt_message_discarded_events_get_count) X(bt_message_discarded_packets_get_count)                   \
    X(bt_stream_borrow_trace_const) X(bt_trace_borrow_environment_entry_value_by_name_const)             \
    X(bt_packet_borrow_stream_const) X(bt_stream_borrow_class_const)                                    \
    X(bt_stream_class_borrow_default_clock_class_const)                                                 \
    X(bt_event_borrow_class_const) X(bt_event_class_get_name) X(bt_event_borrow_payload_field_const)     \
    X(bt_event_borrow_packet_const) X(bt_packet_borrow_context_field_const)                             \
    X(bt_event_borrow_common_context_field_const) X(bt_event_borrow_specific_context_field_const)       \
    X(bt_field_get_class_type) X(bt_field_borrow_class_const) X(bt_field_class_structure_get_member_count) \
    X(bt_field_class_structure_borrow_member_by_index_const) X(bt_field_class_structure_member_get_name) \
    X(bt_field_structure_borrow_member_field_by_index_const)                                            \
    X(bt_field_class_integer_get_preferred_display_base) X(bt_field_integer_unsigned_get_value)          \
    X(bt_field_integer_signed_get_value) X(bt_field_string_get_value) X(bt_field_string_get_length)      \
    X(bt_current_thread_take_error) X(bt_current_thread_clear_error) X(bt_error_get_cause_count)         \
    X(bt_error_borrow_cause_by_index) X(bt_error_cause_get_message) X(bt_error_release)

typedef struct ingest_ctflib {
#define INGEST_CTFLIB_MEMBER(f) __typeof__(&f) f;
    INGEST_CTFLIB_FUNCS(INGEST_CTFLIB_MEMBER)
#undef INGEST_CTFLIB_MEMBER
} ingest_ctflib;

/* Fills *lib.  -1 with a message naming the package to install when the
 * library cannot be loaded. */
int ingest_ctflib_open(ingest_ctflib *lib, char *err, size_t errlen);

#endif
