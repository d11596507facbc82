// Submit validation of Armada's fields (src/api/armada_fields.cc): namespace, services and
// ingress ports, the gang and failFast annotations, and the gang they give the job.

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "src/api/validation.h"

namespace regatta::api {
namespace {

using regatta::v1::Job;
using regatta::v1::SubmitJobsRequest;
using ::testing::HasSubstr;

SubmitPolicy Policy() {
  SubmitPolicy p;
  p.priority_classes = {{"default", {1000, false}}, {"armada-preemptible", {900, true}}};
  return p;
}

// One item with a pod serving 8080 and 8081, plus `extra` (text format of the item's fields).
SubmitJobsRequest Request(const std::string& extra) {
  SubmitJobsRequest request;
  const std::string text = R"pb(
                             queue: "q"
                             job_set: "s"
                             items { task {
                               pod_spec {
                                 containers {
                                   name: "web"
                                   image: "localhost/busybox"
                                   ports { container_port: 8080 }
                                   ports { container_port: 8081 }
                                 }
                               }
                             }
                           )pb" +
                           extra + "}";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &request)) << text;
  return request;
}

absl::Status Validate(const std::string& extra) {
  return ValidateSubmitRequest(Request(extra), Policy());
}

TEST(ArmadaFieldsTest, NamespaceServicesAndIngressOnTheirPortsAreAccepted) {
  EXPECT_TRUE(Validate(R"pb(
                namespace: "research-1"
                services { type: "NodePort" ports: 8080 }
                services { type: "Headless" ports: 8081 ports: 8080 name: "api" }
                services { ports: 8081 }
                ingress { ports: 8080 tls_enabled: true cert_name: "web-cert" }
              )pb")
                  .ok());
}

TEST(ArmadaFieldsTest, NamespaceMustBeADns1123Label) {
  absl::Status s = Validate(R"pb(namespace: "Research_1")pb");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("items[0].namespace: \"Research_1\" is not a DNS-1123 label"));
}

TEST(ArmadaFieldsTest, AServicePortMustBeAContainerPortOfThePod) {
  absl::Status s = Validate(R"pb(services { type: "NodePort" ports: 8080 ports: 9999 })pb");
  EXPECT_EQ(s.message(),
            "items[0].services[0].ports[1]: 9999 is not a containerPort of the pod (declare it "
            "under podSpec.containers[].ports)");
  s = Validate(R"pb(ingress { ports: 7000 })pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].ingress[0].ports[0]: 7000 is not a containerPort"));
  s = Validate(R"pb(services { type: "NodePort" })pb");
  EXPECT_EQ(s.message(), "items[0].services[0].ports: at least one port is required");
}

TEST(ArmadaFieldsTest, AFlatTaskHasNoPortsToServe) {
  SubmitJobsRequest request;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(queue: "q"
                                                                 job_set: "s"
                                                                 items {
                                                                   task { command: "true" }
                                                                   services { ports: 80 }
                                                                 })pb",
                                                            &request));
  absl::Status s = ValidateSubmitRequest(request, Policy());
  EXPECT_THAT(s.message(),
              HasSubstr("items[0].services[0].ports[0]: 80 is not a containerPort of the pod: "
                        "the job has no pod spec"));
}

TEST(ArmadaFieldsTest, ServiceTypesAndNamesAreChecked) {
  absl::Status s = Validate(R"pb(services { type: "LoadBalancer" ports: 8080 })pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].services[0].type: unsupported value "
                                     "\"LoadBalancer\" (supported: NodePort, Headless"));
  s = Validate(R"pb(services { name: "a" ports: 8080 }
                    services { name: "a" ports: 8081 })pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].services[1].name: \"a\" names another service"));
  s = Validate(R"pb(services { ports: 8080 ports: 8080 })pb");
  EXPECT_EQ(s.message(), "items[0].services[0].ports[1]: 8080 given twice");
}

constexpr char kGangOfTwo[] = R"pb(
  annotations { key: "armadaproject.io/gangId" value: "pair" }
  annotations { key: "armadaproject.io/gangCardinality" value: "2" }
  annotations { key: "armadaproject.io/gangNodeUniformityLabel" value: "zone" }
)pb";

TEST(ArmadaFieldsTest, GangAnnotationsMakeAGangThatMustArriveWhole) {
  SubmitJobsRequest request = Request(kGangOfTwo);
  absl::Status s = ValidateSubmitRequest(request, Policy());
  EXPECT_THAT(s.message(), HasSubstr("gang cardinality mismatch: gang \"pair\" declares 2 "
                                     "members but the request has 1"));
  *request.add_items() = request.items(0);
  EXPECT_TRUE(ValidateSubmitRequest(request, Policy()).ok());

  // The submitted job carries the gang the annotations declare, annotations kept.
  Job job;
  *job.mutable_annotations() = request.items(0).annotations();
  *job.mutable_task() = request.items(0).task();
  NormalizeJob(job, Policy());
  EXPECT_EQ(job.gang().id(), "pair");
  EXPECT_EQ(job.gang().cardinality(), 2u);
  EXPECT_EQ(job.gang().node_uniformity_label(), "zone");
  EXPECT_EQ(job.annotations().at("armadaproject.io/gangId"), "pair");
}

TEST(ArmadaFieldsTest, GangAnnotationsThatDoNotReadAsAGangAreRefusedNamingTheAnnotation) {
  absl::Status s = Validate(R"pb(annotations { key: "armadaproject.io/gangId" value: "g" })pb");
  EXPECT_THAT(s.message(),
              HasSubstr("items[0].annotations[armadaproject.io/gangCardinality]: required with "
                        "armadaproject.io/gangId"));
  s = Validate(R"pb(
    annotations { key: "armadaproject.io/gangId" value: "g" }
    annotations { key: "armadaproject.io/gangCardinality" value: "two" }
  )pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].annotations[armadaproject.io/gangCardinality]: "
                                     "\"two\" is not a positive integer"));
  s = Validate(R"pb(annotations { key: "armadaproject.io/gangCardinality" value: "2" })pb");
  EXPECT_THAT(s.message(), HasSubstr("needs the armadaproject.io/gangId annotation"));
  s = Validate(std::string(kGangOfTwo) + R"pb(gang { id: "other" cardinality: 2 })pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].annotations[armadaproject.io/gangId]: the gang "
                                     "annotations disagree with gang"));
}

TEST(ArmadaFieldsTest, FailFastIsTrueOrFalseAndTakesNoRetryPolicy) {
  EXPECT_TRUE(
      Validate(R"pb(annotations { key: "armadaproject.io/failFast" value: "true" })pb").ok());
  EXPECT_TRUE(Validate(R"pb(
                annotations { key: "armadaproject.io/failFast" value: "false" }
                retry_policy { max_retries: 2 }
              )pb")
                  .ok());
  absl::Status s = Validate(R"pb(annotations { key: "armadaproject.io/failFast" value: "yes" })pb");
  EXPECT_THAT(s.message(), HasSubstr("items[0].annotations[armadaproject.io/failFast]: \"yes\": "
                                     "expected \"true\" or \"false\""));
  s = Validate(R"pb(
    annotations { key: "armadaproject.io/failFast" value: "true" }
    retry_policy { max_retries: 2 }
  )pb");
  EXPECT_THAT(s.message(), HasSubstr("a failFast job is never retried"));
}

TEST(ArmadaFieldsTest, PriorityClassNameOfThePodPicksArmadasClass) {
  SubmitJobsRequest request = Request("");
  request.mutable_items(0)->mutable_task()->mutable_pod_spec()->set_priority_class_name(
      "armada-preemptible");
  ASSERT_TRUE(ValidateSubmitRequest(request, Policy()).ok());
  Job job;
  *job.mutable_task() = request.items(0).task();
  NormalizeJob(job, Policy());
  EXPECT_EQ(job.priority_class(), "armada-preemptible");
}

}  // namespace
}  // namespace regatta::api
