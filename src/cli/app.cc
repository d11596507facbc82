#include "src/cli/app.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/cli/agent.h"
#include "src/cli/commands.h"
#include "src/cli/devices_cli.h"
#include "src/cli/dh.h"
#include "src/cli/flags.h"
#include "src/cli/input_file.h"
#include "src/cli/pipeline.h"
#include "src/cli/pipelines_cli.h"
#include "src/cli/runs.h"
#include "src/cli/simulate.h"
#include "src/cli/users.h"
#include "src/common/status_macros.h"
#include "src/server/up.h"

namespace regatta::cli {
namespace {

constexpr char kGlobalFlagsFooter[] =
    "Global flags (before or after the verb):\n"
    "  --server HOST:PORT    API server ($REGATTA_SERVER, default 127.0.0.1:50051)\n"
    "  --token TOKEN         bearer token ($REGATTA_TOKEN)\n"
    "  --user U --password P basic auth ($REGATTA_USER, $REGATTA_PASSWORD)\n"
    "  --tls-ca FILE         TLS: verify the server with this CA ($REGATTA_TLS_CA)\n"
    "  --tls-cert FILE --tls-key FILE  client certificate for mutual TLS ($REGATTA_TLS_CERT,\n"
    "                        $REGATTA_TLS_KEY)\n"
    "  --tls-server-name N   name the server's certificate must carry ($REGATTA_TLS_SERVER_NAME)\n"
    "  -o table|json|yaml    output format (default table)\n"
    "  --timeout DURATION    deadline of each call (default 30s)";

// "queue create" for the deepest subcommand the parser selected.
std::string VerbOf(const CLI::App& app) {
  std::vector<std::string> names;
  const CLI::App* current = &app;
  while (true) {
    auto selected = current->get_subcommands();
    if (selected.empty()) break;
    current = selected.front();
    names.push_back(current->get_name());
  }
  return absl::StrJoin(names, " ");
}

CLI::App* AddVerb(CLI::App* parent, const std::string& name, const std::string& description) {
  CLI::App* verb = parent->add_subcommand(name, description);
  verb->footer(kGlobalFlagsFooter);
  return verb;
}

// The bulk selection flags of `cancel` and `preempt`.
void AddBulkFlags(CLI::App* verb, JobSelection& selection) {
  verb->add_option("--executor", selection.executor,
                   "Every job running (or leased) on this executor");
  verb->add_option("--node", selection.node, "With --executor: only jobs on this node");
  verb->add_option("--priority-class", selection.priority_classes,
                   "Whole queue or executor: only jobs of these priority classes, e.g. low,batch");
}

// Adds the flags shared by `queue create` and `queue update`.
void AddQueueSpecFlags(CLI::App* verb, QueueOptions& options, double& priority_factor) {
  verb->add_option("NAME", options.name, "Queue name");
  verb->add_option("-f,--file", options.file,
                   "A Queue in YAML (lowerCamelCase fields, as `queue get -o yaml` prints); "
                   "\"-\" reads stdin");
  verb->add_option("--priority-factor", priority_factor,
                   "Weight = 1/factor: a queue with factor 2 gets half the share of one with 1");
  verb->add_option("--permission", options.spec.permissions,
                   "KIND:NAME[,KIND:NAME]=VERB[,VERB], e.g. 'group:team-a=submit,cancel'; kinds "
                   "user, group; verbs submit, cancel, reprioritize, preempt, watch, all "
                   "(repeatable)");
  verb->add_option("--label", options.spec.labels, "k=v (repeatable)");
  verb->add_option("--limit", options.spec.limits,
                   "PRIORITY_CLASS:RESOURCE=FRACTION[,...], e.g. 'armada-default:cpu=0.5,"
                   "memory=0.5' (repeatable)");
}

void AddUpFlags(CLI::App* verb, std::string& config, std::vector<std::string>& sets,
                std::string& data_dir, std::string& grpc_listen, std::string& http_listen) {
  verb->add_option("--config", config, "Configuration file (YAML)")->envname("REGATTA_CONFIG");
  verb->add_option("--set", sets, "Override a configuration key: key.path=value (repeatable)");
  verb->add_option("--data-dir", data_dir, "Data directory (default ./regatta-data)");
  verb->add_option("--grpc-listen", grpc_listen, "gRPC listen address HOST:PORT");
  verb->add_option("--http-listen", http_listen, "HTTP (REST and web UI) listen address");
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
           std::ostream& err, bool stdin_is_terminal) {
  CLI::App app{"Regatta: queues of batch jobs, scheduled fairly.", "regatta"};
  app.fallthrough();  // global flags may follow the verb: `regatta queue list -o json`
  app.require_subcommand(1);
  app.footer(
      "Run 'regatta VERB --help' for a verb's flags. Examples:\n"
      "  regatta up\n"
      "  regatta queue create team-a --permission 'group:team-a=all'\n"
      "  regatta submit jobs.yaml\n"
      "  regatta watch team-a nightly");

  CommandEnv env;
  env.in = &in;
  env.out = &out;
  env.err = &err;
  env.interactive_stdin = stdin_is_terminal;
  std::string output = "table";
  std::string timeout = "30s";
  env.client.server = kDefaultServer;
  app.add_option("--server", env.client.server, "API server HOST:PORT")
      ->envname("REGATTA_SERVER")
      ->capture_default_str();
  app.add_option("--token", env.client.token, "Bearer token")->envname("REGATTA_TOKEN");
  app.add_option("--user", env.client.user, "User for basic auth")->envname("REGATTA_USER");
  app.add_option("--password", env.client.password, "Password for basic auth")
      ->envname("REGATTA_PASSWORD");
  app.add_option("--tls-ca", env.client.tls.ca_file,
                 "TLS: CA file that verifies the server (an https:// --server without it: the "
                 "system's CAs)")
      ->envname("REGATTA_TLS_CA");
  app.add_option("--tls-cert", env.client.tls.cert_file, "TLS client certificate (mutual TLS)")
      ->envname("REGATTA_TLS_CERT");
  app.add_option("--tls-key", env.client.tls.key_file, "Key of --tls-cert")
      ->envname("REGATTA_TLS_KEY");
  app.add_option("--tls-server-name", env.client.tls.server_name,
                 "Name the server's certificate must carry, if not the --server host")
      ->envname("REGATTA_TLS_SERVER_NAME");
  app.add_option("-o,--output", output, "Output format: table, json or yaml")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "Deadline of each call, e.g. 30s, 2m")
      ->capture_default_str();

  // The verb to run once parsing succeeded; returns an exit code or a status to report.
  std::function<absl::StatusOr<int>()> action;
  auto status_action = [&action](std::function<absl::Status()> f) {
    action = [f = std::move(f)]() -> absl::StatusOr<int> {
      absl::Status status = f();
      if (!status.ok()) return status;
      return kExitOk;
    };
  };

  // ---- up / server
  std::string up_config, up_data_dir, up_grpc, up_http;
  std::vector<std::string> up_sets;
  int up_simulated_nodes = 0;
  for (const char* name : {"up", "server"}) {
    bool is_up = std::string(name) == "up";
    CLI::App* verb = app.add_subcommand(
        name, is_up ? "Run the whole platform in this process (embedded defaults)"
                    : "Run the API server and its components as a server process");
    AddUpFlags(verb, up_config, up_sets, up_data_dir, up_grpc, up_http);
    if (is_up) {
      verb->add_option("--simulated-nodes", up_simulated_nodes,
                       "Embed a simulated executor with N nodes (32 cpu, 128Gi) instead of the "
                       "local one: runs end after their regatta.io/simulated-duration");
    }
    verb->callback([&, is_up] {
      action = [&, is_up]() -> absl::StatusOr<int> {
        regatta::server::UpFlags flags;
        flags.config_file = up_config;
        flags.overrides = up_sets;
        flags.data_dir = up_data_dir;
        flags.grpc_listen = up_grpc;
        flags.http_listen = up_http;
        if (up_simulated_nodes < 0) return UsageError("--simulated-nodes: must be positive");
        flags.simulated_nodes = up_simulated_nodes;
        return is_up ? regatta::server::RunUp(flags) : regatta::server::RunServer(flags);
      };
    });
  }

  // ---- queue
  CLI::App* queue = app.add_subcommand("queue", "Create, inspect and change queues");
  queue->require_subcommand(1);
  QueueOptions queue_options;
  double priority_factor = 0;
  std::string queue_name;
  {
    CLI::App* create = AddVerb(queue, "create", "Create a queue (from flags or -f FILE)");
    AddQueueSpecFlags(create, queue_options, priority_factor);
    create->callback([&, create] {
      if (create->count("--priority-factor") > 0)
        queue_options.spec.priority_factor = priority_factor;
      status_action([&] { return QueueCreate(env, queue_options); });
    });
    CLI::App* update = AddVerb(queue, "update",
                               "Change a queue: each flag given replaces that part of the spec; "
                               "-f replaces the whole spec");
    AddQueueSpecFlags(update, queue_options, priority_factor);
    update->callback([&, update] {
      if (update->count("--priority-factor") > 0)
        queue_options.spec.priority_factor = priority_factor;
      status_action([&] { return QueueUpdate(env, queue_options); });
    });
    CLI::App* get = AddVerb(queue, "get", "Show one queue");
    get->add_option("NAME", queue_name, "Queue name")->required();
    get->callback([&] { status_action([&] { return QueueGet(env, queue_name); }); });
    CLI::App* list = AddVerb(queue, "list", "List queues");
    list->callback([&] { status_action([&] { return QueueList(env); }); });
    CLI::App* report = AddVerb(queue, "report",
                               "Fair share, adjusted fair share and actual share of each queue in "
                               "each pool, from the scheduler's latest cycle");
    report->add_option("QUEUE", queue_name, "Only this queue");
    report->callback([&] { status_action([&] { return QueueReport(env, queue_name); }); });
    CLI::App* del = AddVerb(queue, "delete", "Delete a queue");
    del->add_option("NAME", queue_name, "Queue name")->required();
    del->callback([&] { status_action([&] { return QueueDelete(env, queue_name); }); });
    CLI::App* cordon = AddVerb(queue, "cordon", "Stop a queue from accepting new jobs");
    cordon->add_option("NAME", queue_name, "Queue name")->required();
    cordon->callback([&] { status_action([&] { return QueueCordon(env, queue_name, true); }); });
    CLI::App* uncordon = AddVerb(queue, "uncordon", "Let a cordoned queue accept jobs again");
    uncordon->add_option("NAME", queue_name, "Queue name")->required();
    uncordon->callback([&] { status_action([&] { return QueueCordon(env, queue_name, false); }); });
  }

  // ---- submit
  SubmitOptions submit_options;
  {
    CLI::App* submit =
        AddVerb(&app, "submit", "Submit the jobs of a YAML file {queue, jobSet, jobs: [...]}");
    submit->add_option("FILE", submit_options.file, "Job file; \"-\" reads stdin")->required();
    submit->add_flag("--dry-run", submit_options.dry_run,
                     "Check the file, with the server's checks when it answers; submit nothing");
    submit->add_flag("--local", submit_options.local,
                     "With --dry-run: check the file here only, without asking the server");
    submit->add_option("--batch-size", submit_options.batch_size, "Jobs per SubmitJobs call")
        ->capture_default_str();
    submit->callback([&] { status_action([&] { return Submit(env, submit_options); }); });
  }

  // ---- cancel / reprioritize / preempt
  JobSelection selection;
  std::vector<std::string> states;
  std::string reason;
  int64_t priority = 0;
  {
    CLI::App* cancel = AddVerb(&app, "cancel",
                               "Cancel jobs by id, a job set (--queue Q --job-set S), a whole "
                               "queue (--queue Q) or everything on an executor (--executor E)");
    cancel->add_option("JOB_ID", selection.job_ids, "Job ids");
    cancel->add_option("--queue", selection.queue,
                       "Queue of the job set; alone: the whole queue; with --executor: only "
                       "this queue's jobs");
    cancel->add_option("--job-set", selection.job_set, "Job set to cancel");
    cancel->add_option("--state", states,
                       "Job-set or queue cancel: only jobs in these states, e.g. QUEUED,RUNNING");
    AddBulkFlags(cancel, selection);
    cancel->add_option("--reason", reason, "Why (recorded in the job's events)");
    cancel->callback(
        [&] { status_action([&] { return Cancel(env, selection, states, reason); }); });

    CLI::App* reprioritize =
        AddVerb(&app, "reprioritize", "Change the priority of jobs, or of a whole job set");
    reprioritize->add_option("JOB_ID", selection.job_ids, "Job ids");
    reprioritize->add_option("--queue", selection.queue, "Queue of the job set");
    reprioritize->add_option("--job-set", selection.job_set, "Job set to reprioritize");
    reprioritize->add_option("--priority", priority, "New priority (lower runs first)")->required();
    reprioritize->callback(
        [&] { status_action([&] { return Reprioritize(env, selection, priority); }); });

    CLI::App* preempt = AddVerb(&app, "preempt",
                                "Preempt running jobs by id, of a whole queue (--queue Q) or on "
                                "an executor (--executor E); queued jobs are left alone");
    preempt->add_option("JOB_ID", selection.job_ids, "Job ids");
    preempt->add_option("--queue", selection.queue,
                        "Queue of the jobs (optional); alone: the whole queue; with "
                        "--executor: only this queue's jobs");
    AddBulkFlags(preempt, selection);
    preempt->add_option("--job-set", selection.job_set, "Job set of the jobs (optional)");
    preempt->add_option("--reason", reason, "Why (recorded in the job's events)");
    preempt->callback([&] { status_action([&] { return Preempt(env, selection, reason); }); });
  }

  // ---- jobs
  JobsListOptions list_options;
  std::string job_id;
  bool with_spec = false;
  {
    CLI::App* jobs = app.add_subcommand("jobs", "List and inspect jobs");
    jobs->require_subcommand(1);
    CLI::App* list = AddVerb(jobs, "list", "List jobs, oldest first");
    list->add_option("--queue", list_options.queue, "Only this queue");
    list->add_option("--job-set", list_options.job_set, "Only this job set");
    list->add_option("--state", list_options.states, "Only these states, e.g. QUEUED,RUNNING");
    list->add_option("--owner", list_options.owner, "Only jobs of this user");
    list->add_option("--namespace", list_options.namespace_,
                     "Only jobs of this namespace (Armada's job files set it)");
    list->add_option("--label", list_options.labels, "Only jobs with label k=v (repeatable)");
    list->add_option("--limit", list_options.limit, "At most this many jobs")
        ->capture_default_str();
    list->add_flag("--all", list_options.all, "Every matching job (pages through)");
    list->add_flag("--newest-first", list_options.newest_first, "Newest jobs first");
    list->callback([&] { status_action([&] { return JobsList(env, list_options); }); });

    CLI::App* get = AddVerb(jobs, "get", "Show one job with its runs and errors");
    get->add_option("JOB_ID", job_id, "Job id")->required();
    get->add_flag("--spec", with_spec, "Include the job's spec");
    get->callback([&] { status_action([&] { return JobsGet(env, job_id, with_spec); }); });
  }

  // ---- watch
  WatchOptions watch_options;
  std::string watch_timeout;
  {
    CLI::App* watch =
        AddVerb(&app, "watch", "Print a job set's events until every job seen has finished");
    watch->footer(absl::StrCat(
        "Exit code 0: every job succeeded; 1: some job failed, was cancelled, preempted or "
        "rejected; 2: --timeout passed first.\n\n",
        kGlobalFlagsFooter));
    watch->add_option("QUEUE", watch_options.queue, "Queue")->required();
    watch->add_option("JOBSET", watch_options.job_set, "Job set")->required();
    watch->add_option("--from", watch_options.from_id, "Start after this event id");
    watch->add_flag("--no-follow", watch_options.no_follow,
                    "Print the events logged so far and exit");
    watch->add_option("--timeout", watch_timeout, "Give up after this long (exit code 2)");
    watch->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        if (!watch_timeout.empty()) {
          auto d = ParseDurationFlag(watch_timeout);
          if (!d.ok()) return UsageError(absl::StrCat("--timeout ", d.status().message()));
          watch_options.timeout = *d;
        }
        return Watch(env, watch_options);
      };
    });
  }

  // ---- why
  std::string why_job;
  {
    CLI::App* why = AddVerb(&app, "why", "Say why a job is (not) running");
    why->add_option("JOB_ID", why_job, "Job id")->required();
    why->callback([&] { status_action([&] { return Why(env, why_job); }); });
  }

  // ---- logs
  LogsOptions logs_options;
  {
    CLI::App* logs = AddVerb(&app, "logs", "Print a job's output (its latest run unless --run)");
    logs->add_option("JOB_ID", logs_options.job_id, "Job id")->required();
    logs->add_flag("-f,--follow", logs_options.follow,
                   "Keep printing new output until the run ends");
    logs->add_option("--run", logs_options.run_id, "A run of the job (default: the latest)");
    logs->add_option("--tail", logs_options.tail_lines, "Only the last N lines");
    logs->callback([&] { status_action([&] { return Logs(env, logs_options); }); });
  }

  // ---- executor
  bool executor_local = false;
  regatta::server::ExecutorFlags executor_flags;
  {
    CLI::App* executor =
        AddVerb(&app, "executor", "Run an executor that takes leases from the server at --server");
    executor->add_option("--config", up_config, "Configuration file (YAML; its executor: section)")
        ->envname("REGATTA_CONFIG");
    executor->add_option("--set", up_sets, "Override a configuration key: key.path=value");
    executor->add_option("--data-dir", up_data_dir,
                         "Data directory; runs live in its executor/ (default ./regatta-data)");
    executor->add_flag("--local", executor_local, "Run jobs as local processes");
    executor->add_flag("--simulated", executor_flags.simulated,
                       "Run nothing: simulated nodes whose runs end after a simulated duration "
                       "(executor.simulated; annotation regatta.io/simulated-duration)");
    executor->add_option("--nodes", executor_flags.nodes,
                         "With --simulated: N nodes sim-0000... (32 cpu, 128Gi) instead of "
                         "executor.simulated.nodes");
    executor->add_option("--node-cpu", executor_flags.node_cpu,
                         "With --simulated: cpu of each node (e.g. 32)");
    executor->add_option("--node-memory", executor_flags.node_memory,
                         "With --simulated: memory of each node (e.g. 128Gi)");
    executor->add_option("--discovery-dir", executor_flags.discovery_dir,
                         "With --local: run the node's device agent; discovery handlers "
                         "(regatta dh NAME --dir DIR) register there (executor.discovery.dir)");
    executor->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        if (executor_local == executor_flags.simulated) {
          return UsageError("say which executor: --local or --simulated");
        }
        if (!executor_flags.simulated &&
            (executor_flags.nodes != 0 || !executor_flags.node_cpu.empty() ||
             !executor_flags.node_memory.empty())) {
          return UsageError("--nodes, --node-cpu and --node-memory go with --simulated");
        }
        if (executor_flags.nodes < 0) return UsageError("--nodes: must be positive");
        if (executor_flags.simulated && !executor_flags.discovery_dir.empty()) {
          return UsageError(
              "--discovery-dir goes with --local (for devices on simulated nodes run `regatta "
              "agent --executor-id E --node N --dir DIR` per node)");
        }
        ASSIGN_OR_RETURN(std::string authorization, AuthorizationHeader(env.client));
        regatta::server::UpFlags flags;
        flags.config_file = up_config;
        flags.overrides = up_sets;
        flags.data_dir = up_data_dir;
        ASSIGN_OR_RETURN(auto target, ServerTarget(env.client.server));
        executor_flags.tls = env.client.tls;
        executor_flags.tls.enabled = target.second;
        return regatta::server::RunExecutor(flags, executor_flags, target.first, authorization);
      };
    });
  }

  // ---- dh (discovery handlers, each its own process)
  DebugEchoFlags debug_echo_flags;
  HandlerFlags udev_flags{.name = "udev"};
  OnvifFlags onvif_flags;
  OpcuaFlags opcua_flags;
  {
    CLI::App* dh = app.add_subcommand(
        "dh", "Run a device discovery handler that registers with this node's agent");
    dh->require_subcommand(1);
    CLI::App* echo = dh->add_subcommand(
        "debug-echo",
        "Akri's debugEcho: one device per description in the discovery details "
        "(descriptions: [foo0, foo1]); none while the availability file says OFFLINE");
    auto add_handler_flags = [](CLI::App* verb, HandlerFlags& flags) {
      verb->add_option("--dir", flags.dir,
                       "Discovery directory shared with the agent (default "
                       "$DISCOVERY_HANDLERS_DIRECTORY as Akri's handlers, else "
                       "/var/lib/regatta/discovery)")
          ->envname("REGATTA_DISCOVERY_DIR");
      verb->add_option("--name", flags.name, "Handler name Configurations ask for")
          ->capture_default_str();
      verb->add_option("--socket", flags.socket, "Serve on this socket instead of DIR/NAME.sock");
    };
    add_handler_flags(echo, debug_echo_flags.handler);
    echo->add_flag("--shared", debug_echo_flags.shared,
                   "The devices are visible from several nodes (default: local to this node)");
    echo->add_option("--availability-file", debug_echo_flags.availability_file,
                     "While this file contains OFFLINE no devices are reported (default "
                     "/tmp/debug-echo-availability.txt)")
        ->envname("DEBUG_ECHO_AVAILABILITY_CHECK_PATH");
    echo->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        return RunDebugEcho(debug_echo_flags, *env.out, *env.err);
      };
    });
    CLI::App* udev =
        dh->add_subcommand("udev",
                           "Devices of this node matched by udev rules in the discovery details "
                           "(udevRules: ['KERNEL==\"video[0-9]*\"']); local to the node");
    add_handler_flags(udev, udev_flags);
    udev->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        return RunUdevHandler(udev_flags, *env.out, *env.err);
      };
    });
    CLI::App* onvif = dh->add_subcommand(
        "onvif",
        "ONVIF cameras found by WS-Discovery, filtered as the discovery details say "
        "(ipAddresses, macAddresses, scopes, uuids); shared between nodes");
    add_handler_flags(onvif, onvif_flags.handler);
    onvif
        ->add_option("--probe-address", onvif_flags.probe_address,
                     "Where the WS-Discovery Probe goes (IPV4:PORT)")
        ->capture_default_str();
    onvif->add_option("--interface", onvif_flags.interface,
                      "IPv4 address of the interface the multicast Probe leaves by (default: "
                      "the kernel's choice)");
    onvif
        ->add_option("--rediscover-interval", onvif_flags.rediscover_interval,
                     "A discovery pass this often; a changed list is streamed at once")
        ->capture_default_str();
    onvif
        ->add_option("--http-timeout", onvif_flags.http_timeout,
                     "Time allowed for each SOAP call to a camera")
        ->capture_default_str();
    onvif->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        return RunOnvifHandler(onvif_flags, *env.out, *env.err);
      };
    });
    CLI::App* opcua = dh->add_subcommand(
        "opcua",
        "OPC UA servers found by FindServers on the discovery URLs of the discovery details "
        "(opcuaDiscoveryMethod: {standard: {discoveryUrls: [opc.tcp://host:4840/]}}); shared");
    add_handler_flags(opcua, opcua_flags.handler);
    opcua
        ->add_option("--discovery-interval", opcua_flags.discovery_interval,
                     "How often the servers are asked again (e.g. 10s, 500ms)")
        ->capture_default_str();
    opcua->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        return RunOpcuaHandler(opcua_flags, *env.out, *env.err);
      };
    });
  }

  // ---- agent (a node's device agent as its own process)
  AgentFlags agent_flags;
  {
    CLI::App* agent = AddVerb(&app, "agent",
                              "Run the device agent of one node of an executor (e.g. a simulated "
                              "node): discovery handlers register in --dir, devices go to the "
                              "server at --server");
    agent->add_option("--executor-id", agent_flags.executor_id,
                      "The executor whose node this is (`regatta executor` prints its id)");
    agent->add_option("--node", agent_flags.node, "The node to discover devices for");
    agent
        ->add_option("--dir", agent_flags.dir,
                     "Discovery directory of the node (regatta dh NAME --dir DIR)")
        ->envname("REGATTA_DISCOVERY_DIR");
    agent->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        ASSIGN_OR_RETURN(std::string authorization, AuthorizationHeader(env.client));
        return RunAgent(agent_flags, env.client.server, env.client.tls, authorization, *env.out);
      };
    });
  }

  // ---- users
  std::string token;
  {
    CLI::App* users = app.add_subcommand("users", "Helpers for the server's users file");
    users->require_subcommand(1);
    CLI::App* hash_password =
        AddVerb(users, "hash-password",
                "Read a password from stdin (prompted on a terminal) and print its argon2id hash");
    hash_password->callback([&] { status_action([&] { return UsersHashPassword(env); }); });
    CLI::App* hash_token =
        AddVerb(users, "hash-token",
                "Print the SHA-256 (hex) of a bearer token, given as TOKEN or on stdin");
    hash_token->add_option("TOKEN", token, "The token (default: read one line from stdin)");
    hash_token->callback([&] { status_action([&] { return UsersHashToken(env, token); }); });
  }

  // ---- simulate
  SimulateOptions simulate_options;
  {
    CLI::App* simulate = app.add_subcommand(
        "simulate", "Run the scheduling algorithm on a simulated cluster and clock (no server)");
    simulate
        ->add_option("--cluster", simulate_options.cluster_file,
                     "Cluster YAML: pools, node groups, priority classes, scheduling settings "
                     "(or Armada's simulator ClusterSpec)")
        ->required();
    simulate
        ->add_option("--workload", simulate_options.workload_file,
                     "Workload YAML: queues and job templates (or Armada's simulator "
                     "WorkloadSpec)")
        ->required();
    simulate->add_option("--scheduling-config", simulate_options.scheduling_config_file,
                         "Armada's scheduling config (its config.yaml, or only its `scheduling` "
                         "section); replaces the cluster's scheduling settings");
    simulate->add_option("--until", simulate_options.until,
                         "Simulated time to stop at, e.g. 2h (default: when nothing more can "
                         "change)");
    simulate->add_option(
        "--interval", simulate_options.interval,
        "Simulated time between printed samples (default: 1m, at least one cycle)");
    simulate->add_option("--csv", simulate_options.csv_file,
                         "Also write the samples as CSV: time_s,pool,subject,metric,value");
    simulate->add_option("--out-jobs", simulate_options.jobs_csv_file,
                         "Write one CSV row per job (state, submit/lease/end times, node, "
                         "preemption)");
    simulate->add_option("--out-cycles", simulate_options.cycles_csv_file,
                         "Write one CSV row per cycle, pool and queue (share, fair share, "
                         "running, queued, leased, preempted)");
    simulate->callback([&] {
      status_action(
          [&] { return Simulate(env, simulate_options, regatta::scheduler::SchedulePool); });
    });
  }

  // ---- pipeline
  std::string pipeline_file;
  std::string pipeline_out_file;
  {
    CLI::App* pipeline = app.add_subcommand("pipeline", "Kubeflow-Pipelines-style pipelines");
    pipeline->require_subcommand(1);
    CLI::App* validate = AddVerb(pipeline, "validate",
                                 "Check a pipeline (kfp-compiled YAML or JSON, or Regatta's "
                                 "authoring YAML; no server) and show it");
    validate
        ->add_option("FILE", pipeline_file,
                     "Pipeline: kfp-compiled or authoring YAML (- for standard input)")
        ->required();
    validate->callback(
        [&] { status_action([&] { return ValidatePipeline(env, pipeline_file); }); });
    CLI::App* compile =
        AddVerb(pipeline, "compile",
                "Compile Regatta's authoring YAML to the Kubeflow Pipelines IR (YAML, or JSON with "
                "-o json), as the kfp SDK would emit it");
    compile->add_option("FILE", pipeline_file, "Authoring YAML (- for standard input)")->required();
    compile->add_option("--out-file", pipeline_out_file,
                        "Write the IR to this file instead of standard output");
    compile->callback([&] {
      status_action([&] { return CompilePipeline(env, pipeline_file, pipeline_out_file); });
    });
  }

  // ---- pipeline catalogue: pipeline upload|list|get|delete|versions, experiment, artifact,
  // lineage, cache
  PipelineUploadOptions upload_options;
  std::string catalog_ref, experiment_description, artifact_run;
  bool include_archived = false, prune_all = false;
  std::vector<std::string> prune_fingerprints;
  {
    CLI::App* pipeline = app.get_subcommand("pipeline");
    CLI::App* upload = AddVerb(pipeline, "upload",
                               "Upload a compiled pipeline (kfp IR, YAML or JSON) as a new "
                               "pipeline, or with --version as a new version of an existing one");
    upload->add_option("FILE", upload_options.file, "Pipeline file (- for standard input)")
        ->required();
    upload->add_option("--name", upload_options.name, "Pipeline name (unique)")->required();
    upload->add_option("--version", upload_options.version, "Version name (default v1)");
    upload->add_option("--description", upload_options.description, "Description");
    upload->callback([&] { status_action([&] { return PipelineUpload(env, upload_options); }); });
    AddVerb(pipeline, "list", "List uploaded pipelines")->callback([&] {
      status_action([&] { return PipelineList(env); });
    });
    CLI::App* get = AddVerb(pipeline, "get", "Show a pipeline and its latest versions");
    get->add_option("PIPELINE", catalog_ref, "Pipeline id or name")->required();
    get->callback([&] { status_action([&] { return PipelineGet(env, catalog_ref); }); });
    CLI::App* del = AddVerb(pipeline, "delete", "Delete a pipeline and its versions");
    del->add_option("PIPELINE", catalog_ref, "Pipeline id or name")->required();
    del->callback([&] { status_action([&] { return PipelineDelete(env, catalog_ref); }); });
    CLI::App* versions = AddVerb(pipeline, "versions", "List a pipeline's versions, newest first");
    versions->add_option("PIPELINE", catalog_ref, "Pipeline id or name")->required();
    versions->callback([&] { status_action([&] { return PipelineVersions(env, catalog_ref); }); });

    CLI::App* experiment = app.add_subcommand("experiment", "Group pipeline runs");
    experiment->require_subcommand(1);
    CLI::App* create = AddVerb(experiment, "create", "Create an experiment");
    create->add_option("NAME", catalog_ref, "Experiment name (unique)")->required();
    create->add_option("--description", experiment_description, "Description");
    create->callback([&] {
      status_action([&] { return ExperimentCreate(env, catalog_ref, experiment_description); });
    });
    CLI::App* list = AddVerb(experiment, "list", "List experiments");
    list->add_flag("--archived", include_archived, "Include archived experiments");
    list->callback([&] { status_action([&] { return ExperimentList(env, include_archived); }); });
    for (const char* name : {"get", "archive", "unarchive", "delete"}) {
      const std::string verb_name = name;
      CLI::App* verb = AddVerb(experiment, verb_name,
                               verb_name == "get"       ? "Show an experiment"
                               : verb_name == "archive" ? "Archive an experiment (no new runs)"
                               : verb_name == "delete"  ? "Delete an experiment without active runs"
                                                        : "Unarchive an experiment");
      verb->add_option("EXPERIMENT", catalog_ref, "Experiment id or name")->required();
      verb->callback([&, verb_name] {
        status_action([&, verb_name] {
          if (verb_name == "get") return ExperimentGet(env, catalog_ref);
          if (verb_name == "delete") return ExperimentDelete(env, catalog_ref);
          return ExperimentArchive(env, catalog_ref, verb_name == "archive");
        });
      });
    }

    CLI::App* artifact = app.add_subcommand("artifact", "Artifacts of pipeline runs");
    artifact->require_subcommand(1);
    CLI::App* artifact_get = AddVerb(artifact, "get", "Show an artifact");
    artifact_get->add_option("ID", catalog_ref, "Artifact id")->required();
    artifact_get->callback([&] { status_action([&] { return ArtifactGet(env, catalog_ref); }); });
    CLI::App* artifact_list = AddVerb(artifact, "list", "List the artifacts a run produced");
    artifact_list->add_option("--run", artifact_run, "Run id")->required();
    artifact_list->callback(
        [&] { status_action([&] { return ArtifactList(env, artifact_run); }); });

    CLI::App* lineage =
        AddVerb(&app, "lineage", "Where an artifact came from and which tasks consumed it");
    lineage->add_option("ARTIFACT_ID", catalog_ref, "Artifact id")->required();
    lineage->callback([&] { status_action([&] { return Lineage(env, catalog_ref); }); });

    CLI::App* cache = app.add_subcommand("cache", "The pipeline step cache");
    cache->require_subcommand(1);
    AddVerb(cache, "list", "List cache entries")->callback([&] {
      status_action([&] { return CacheList(env); });
    });
    CLI::App* prune =
        AddVerb(cache, "prune", "Delete expired cache entries, or the ones named, or all");
    prune->add_flag("--all", prune_all, "Delete every entry");
    prune->add_option("--fingerprint", prune_fingerprints, "An entry's fingerprint (repeatable)");
    prune->callback(
        [&] { status_action([&] { return CachePrune(env, prune_all, prune_fingerprints); }); });
  }

  // ---- devices: config apply|get|list|delete, instances list|get, services list|get
  // (the DeviceService)
  std::string device_file, device_name, instance_configuration, instance_node;
  {
    CLI::App* config = app.add_subcommand(
        "config", "Device Configurations, Secrets and ConfigMaps (Akri-style resource files)");
    config->require_subcommand(1);
    CLI::App* apply = AddVerb(config, "apply",
                              "Create or replace every Configuration, Secret and ConfigMap of a "
                              "YAML or JSON file");
    apply->add_option("FILE", device_file, "Resource file (- for standard input)")->required();
    apply->callback([&] { status_action([&] { return ConfigApply(env, device_file); }); });
    CLI::App* del = AddVerb(config, "delete", "Delete every resource a file names");
    del->add_option("FILE", device_file, "Resource file (- for standard input)")->required();
    del->callback([&] { status_action([&] { return ConfigDelete(env, device_file); }); });
    CLI::App* get = AddVerb(config, "get", "Show a Configuration and its discovery status");
    get->add_option("NAME", device_name, "Configuration name")->required();
    get->callback([&] { status_action([&] { return ConfigGet(env, device_name); }); });
    AddVerb(config, "list", "List Configurations")->callback([&] {
      status_action([&] { return ConfigList(env); });
    });

    CLI::App* instances = app.add_subcommand("instances", "Discovered devices (Instances)");
    instances->require_subcommand(1);
    CLI::App* list = AddVerb(instances, "list", "List Instances");
    list->add_option("--configuration", instance_configuration, "Only this Configuration's");
    list->add_option("--node", instance_node, "Only those this node sees");
    list->callback([&] {
      status_action([&] { return InstancesList(env, instance_configuration, instance_node); });
    });
    CLI::App* show = AddVerb(instances, "get", "Show an Instance and its slots");
    show->add_option("NAME", device_name, "Instance name")->required();
    show->callback([&] { status_action([&] { return InstancesGet(env, device_name); }); });

    CLI::App* services = app.add_subcommand(
        "services", "Instance and configuration services: the brokers serving each device");
    services->require_subcommand(1);
    CLI::App* services_list = AddVerb(services, "list", "List services and their ready endpoints");
    services_list->add_option("--configuration", instance_configuration,
                              "Only this Configuration's");
    services_list->callback(
        [&] { status_action([&] { return ServicesList(env, instance_configuration); }); });
    CLI::App* services_get = AddVerb(services, "get", "Show a service and all its endpoints");
    services_get
        ->add_option("NAME", device_name,
                     "Service name (<instance>-svc or "
                     "<configuration>-svc)")
        ->required();
    services_get->callback([&] { status_action([&] { return ServicesGet(env, device_name); }); });
  }

  // ---- pipeline run, run, recurring (the RunService)
  RunCreateOptions run_create;
  std::string run_timeout;
  std::string run_id;
  RunListOptions run_list;
  RecurringCreateOptions recurring_create;
  std::string recurring_id;
  {
    CLI::App* pipeline = app.get_subcommand("pipeline");
    CLI::App* run =
        AddVerb(pipeline, "run", "Run a pipeline (a kfp-compiled file, or an uploaded pipeline)");
    run->footer(absl::StrCat(
        "With --watch the exit code is 0 when the run succeeded (or was skipped), 1 when it "
        "failed or was cancelled, 2 when --timeout passed first.\n\n",
        kGlobalFlagsFooter));
    run->add_option("FILE", run_create.file, "Pipeline file (- for standard input)");
    run->add_option("--pipeline", run_create.pipeline, "An uploaded pipeline (id or name)");
    run->add_option("--version", run_create.version, "An uploaded pipeline version id");
    run->add_option("-p,--param", run_create.params, "NAME=VALUE (JSON, else a string)");
    run->add_option("--name", run_create.name, "The run's display name");
    run->add_option("--experiment", run_create.experiment, "Experiment (id or name)");
    run->add_option("--queue", run_create.queue, "Queue of the steps' jobs");
    run->add_option("--root", run_create.root, "Where artifacts go (directory or file:// URI)");
    run->add_flag("--no-cache", run_create.no_cache, "Neither read nor write the step cache");
    run->add_flag("-w,--watch", run_create.watch, "Follow the run until it ends");
    run->add_option("--timeout", run_timeout, "With --watch: give up after this long");
    run->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        if (!run_timeout.empty()) {
          auto d = ParseDurationFlag(run_timeout);
          if (!d.ok()) return UsageError(absl::StrCat("--timeout ", d.status().message()));
          run_create.timeout = *d;
        }
        return RunCreate(env, run_create);
      };
    });

    CLI::App* runs = app.add_subcommand("run", "Pipeline runs");
    runs->require_subcommand(1);
    CLI::App* get = AddVerb(runs, "get", "Show a run and its tasks");
    get->add_option("RUN", run_id, "Run id")->required();
    get->callback([&] { status_action([&] { return RunGet(env, run_id); }); });
    CLI::App* list = AddVerb(runs, "list", "List runs, newest first");
    list->add_option("--experiment", run_list.experiment, "Only this experiment (id or name)");
    list->add_option("--pipeline", run_list.pipeline, "Only runs of this pipeline");
    list->add_option("--recurring", run_list.recurring, "Only runs of this recurring run");
    list->add_option("--state", run_list.states, "Only these states (repeatable)");
    list->add_flag("--archived", run_list.archived, "Include archived runs");
    list->add_option("--limit", run_list.limit, "At most this many");
    list->callback([&] { status_action([&] { return RunList(env, run_list); }); });
    CLI::App* watch = AddVerb(runs, "watch", "Follow a run until it ends");
    watch->add_option("RUN", run_id, "Run id")->required();
    watch->add_option("--timeout", run_timeout, "Give up after this long (exit code 2)");
    watch->callback([&] {
      action = [&]() -> absl::StatusOr<int> {
        std::optional<absl::Duration> timeout;
        if (!run_timeout.empty()) {
          auto d = ParseDurationFlag(run_timeout);
          if (!d.ok()) return UsageError(absl::StrCat("--timeout ", d.status().message()));
          timeout = *d;
        }
        return RunWatch(env, run_id, timeout);
      };
    });
    for (const char* verb : {"terminate", "retry", "archive", "unarchive", "delete"}) {
      const std::string name = verb;
      CLI::App* change =
          AddVerb(runs, name,
                  name == "terminate" ? "Stop a run (its running steps are cancelled)"
                  : name == "retry"   ? "Run a failed or cancelled run's failed "
                                        "tasks again"
                  : name == "delete"  ? "Delete an ended run"
                                      : absl::StrCat(name, " a run"));
      change->add_option("RUN", run_id, "Run id")->required();
      change->callback([&, name] { status_action([&] { return RunChange(env, name, run_id); }); });
    }

    CLI::App* recurring = app.add_subcommand("recurring", "Recurring pipeline runs");
    recurring->require_subcommand(1);
    CLI::App* create = AddVerb(recurring, "create", "Run a pipeline on a schedule");
    create->add_option("--name", recurring_create.name, "Display name")->required();
    create->add_option("--pipeline", recurring_create.pipeline, "Uploaded pipeline (id or name)");
    create->add_option("--version", recurring_create.version, "Pipeline version id");
    create->add_option("--cron", recurring_create.cron,
                       "Cron with seconds (\"0 0 * * * *\") or five fields, UTC");
    create->add_option("--every", recurring_create.every, "Interval, e.g. 1h");
    create->add_option("--start", recurring_create.start, "Not before (RFC 3339)");
    create->add_option("--end", recurring_create.end, "Not after (RFC 3339)");
    create->add_option("--max-concurrency", recurring_create.max_concurrency,
                       "Runs active at once");
    create->add_flag("--no-catchup", recurring_create.no_catchup,
                     "After a pause run only the latest missed time");
    create->add_option("-p,--param", recurring_create.params, "NAME=VALUE");
    create->add_option("--experiment", recurring_create.experiment, "Experiment (id or name)");
    create->add_option("--queue", recurring_create.queue, "Queue of the steps' jobs");
    create->callback(
        [&] { status_action([&] { return RecurringCreate(env, recurring_create); }); });
    AddVerb(recurring, "list", "List recurring runs")->callback([&] {
      status_action([&] { return RecurringList(env); });
    });
    for (const char* verb : {"get", "enable", "disable", "delete"}) {
      const std::string name = verb;
      CLI::App* change = AddVerb(recurring, name, absl::StrCat(name, " a recurring run"));
      change->add_option("ID", recurring_id, "Recurring run id")->required();
      change->callback(
          [&, name] { status_action([&] { return RecurringChange(env, name, recurring_id); }); });
    }
  }

  // ---- version
  AddVerb(&app, "version", "Print the version")->callback([&] {
    status_action([&] { return Version(env); });
  });

  if (args.empty()) {
    out << app.help();
    return kExitOk;
  }
  std::string verb;
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 wants argv reversed
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    verb = VerbOf(app);
    std::string where = verb.empty() ? "" : absl::StrCat(verb, ": ");
    std::string help = verb.empty() ? "regatta --help" : absl::StrCat("regatta ", verb, " --help");
    std::string message = e.what();
    // CLI11 reports a mistyped verb as a missing subcommand; name the word instead.
    std::vector<std::string> extras = app.remaining(/*recurse=*/true);
    if (e.get_name() == "RequiredError" && !extras.empty() && !extras.front().empty() &&
        extras.front()[0] != '-') {
      const CLI::App* current = &app;
      while (!current->get_subcommands().empty()) current = current->get_subcommands().front();
      std::vector<std::string> verbs;
      for (const CLI::App* sub : current->get_subcommands({})) verbs.push_back(sub->get_name());
      if (!verbs.empty()) {
        message = absl::StrCat("unknown verb \"", extras.front(), "\" (one of ",
                               absl::StrJoin(verbs, ", "), ")");
      }
    }
    err << "regatta: " << where << message << " (see '" << help << "')\n";
    return kExitUsage;
  }
  verb = VerbOf(app);
  auto usage = [&](absl::string_view message) {
    err << "regatta: " << verb << ": " << message << " (see 'regatta " << verb << " --help')\n";
    return kExitUsage;
  };

  auto format = ParseOutputFormat(output);
  if (!format.ok()) return usage(format.status().message());
  env.output = *format;
  auto unary_timeout = ParseDurationFlag(timeout);
  if (!unary_timeout.ok())
    return usage(absl::StrCat("--timeout ", unary_timeout.status().message()));
  env.client.timeout = *unary_timeout;
  if (!action) return usage("nothing to do");
  if (verb != "up" && verb != "server" && verb != "executor" && verb != "dh debug-echo" &&
      verb != "dh udev" && verb != "dh onvif" && verb != "dh opcua" && verb != "agent") {
    // gRPC's own logging would add lines to a client's one-line errors; quiet unless asked.
    setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  }

  absl::StatusOr<int> result = action();
  out.flush();
  if (result.ok()) return *result;
  if (IsUsageError(result.status())) return usage(result.status().message());
  if (IsInputError(result.status())) {
    err << "regatta: " << verb << ": " << result.status().message() << "\n";
    return kExitUsage;
  }
  err << "regatta: " << verb << ": " << absl::StatusCodeToString(result.status().code()) << ": "
      << result.status().message() << "\n";
  return kExitFailed;
}

int Main(int argc, char** argv) {
  try {
    std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    return RunCli(args, std::cin, std::cout, std::cerr, isatty(STDIN_FILENO) == 1);
  } catch (const std::exception& e) {
    std::cerr << "regatta: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "regatta: internal error\n";
  }
  return kExitFailed;
}

}  // namespace regatta::cli
