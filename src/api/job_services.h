#ifndef REGATTA_SRC_API_JOB_SERVICES_H_
#define REGATTA_SRC_API_JOB_SERVICES_H_

// Job services: the ports a job's pod offers while it runs, listed by `regatta services list`
// beside the device services (src/devices/services). Pods run on the node's host network, so
// a containerPort is served on the node itself; a service names the node's address and ports.
//
//   "<job id>-svc"            the containerPorts of every container of a job without `services`
//   ServiceConfig.name, or    one per entry of the job's `services` (Armada's ServiceConfig):
//   "<job id>-svc-<index>"    its ports (index 0 is "<job id>-svc")
//
// Like the device services nothing is stored: the services are computed from the non-terminal
// jobs labelled kServesPortsLabel (set at submit), so one lives exactly as long as its job.
// Broker jobs are left out: their ports are their Instance's and Configuration's services.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/types.pb.h"
#include "src/devices/services/services.h"
#include "src/store/store.h"

namespace regatta::api {

// Set ("true") by the server on a job whose pod declares a containerPort or that has
// `services`, so that listing services reads only those jobs from the views.
inline constexpr absl::string_view kServesPortsLabel = "regatta.dev/serves-ports";

// Whether a job with this task and these services offers ports.
bool OffersPorts(const regatta::v1::TaskSpec& task,
                 const google::protobuf::RepeatedPtrField<regatta::v1::ServiceConfig>& services);

// The services of one job, from its details with the spec; none for a terminal job or a
// broker. An endpoint exists while the job has a non-terminal run and is ready when RUNNING.
std::vector<regatta::v1::Service> JobServicesOf(
    const regatta::v1::JobDetails& job, const devices::ExecutorAddressLookup& executor_address);

// The services of every non-terminal job labelled kServesPortsLabel, in name order. With
// `queues` empty every queue is read; otherwise only those.
absl::StatusOr<std::vector<regatta::v1::Service>> ListJobServices(
    store::Store& store, const std::vector<std::string>& queues,
    const devices::ExecutorAddressLookup& executor_address);

// The details with specs of every non-terminal job labelled `label`=`value`, in id order; with
// `queues` empty in every queue, otherwise in those.
absl::StatusOr<std::vector<regatta::v1::JobDetails>> ActiveJobsLabelled(
    store::Store& store, const std::vector<std::string>& queues, absl::string_view label,
    absl::string_view value);

// The details with specs of `ids`. A job whose stored spec cannot be read is left out with a
// warning rather than failing the whole read.
absl::StatusOr<std::vector<regatta::v1::JobDetails>> DetailsWithSpecs(
    store::Store& store, const std::vector<std::string>& ids);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_JOB_SERVICES_H_
