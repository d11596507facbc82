#include "src/api/auth/authorizer.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/permissions.h"

namespace regatta::auth {
namespace {

using ::testing::HasSubstr;

regatta::v1::Queue MakeQueue(const std::string& name) {
  regatta::v1::Queue queue;
  queue.set_name(name);
  return queue;
}

void Grant(regatta::v1::Queue& queue, const std::string& kind, const std::string& subject,
           std::initializer_list<std::string> verbs) {
  regatta::v1::QueuePermission* entry = queue.add_permissions();
  regatta::v1::PermissionSubject* s = entry->add_subjects();
  s->set_kind(kind);
  s->set_name(subject);
  for (const std::string& verb : verbs) entry->add_verbs(verb);
}

Authorizer MakeAuthorizer() {
  AuthorizationConfig config;
  config.permission_group_mapping = {
      {"submit_any_jobs", {"admins"}},
      {"create_queue", {"admins", "queue-makers"}},
      {"watch_all_events", {"observers"}},
  };
  config.permission_user_mapping = {{"execute_jobs", {"executor"}}, {"cordon_queue", {"carol"}}};
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(config);
  EXPECT_TRUE(authorizer.ok()) << authorizer.status();
  return *authorizer;
}

const Principal kBob{"bob", {"team-b"}, false};
const Principal kAdmin{"root", {"ops", "admins"}, false};

TEST(PermissionNamesTest, RoundTrip) {
  for (GlobalPermission permission : kAllGlobalPermissions) {
    EXPECT_EQ(*ParseGlobalPermission(GlobalPermissionName(permission)), permission);
  }
  for (QueueVerb verb : kAllQueueVerbs) EXPECT_EQ(*ParseQueueVerb(QueueVerbName(verb)), verb);
  EXPECT_EQ(GlobalPermissionName(GlobalPermission::kExecuteJobs), "execute_jobs");
  EXPECT_EQ(QueueVerbName(QueueVerb::kReprioritize), "reprioritize");
  EXPECT_THAT(ParseGlobalPermission("create_queues").status().message(),
              HasSubstr("unknown permission \"create_queues\" (want one of: submit_any_jobs"));
  EXPECT_THAT(ParseQueueVerb("Submit").status().message(),
              HasSubstr("unknown verb \"Submit\" (want one of: submit, cancel, reprioritize, "
                        "preempt, watch)"));
}

TEST(PermissionNamesTest, VerbToGlobalPermission) {
  EXPECT_EQ(GlobalPermissionForVerb(QueueVerb::kSubmit), GlobalPermission::kSubmitAnyJobs);
  EXPECT_EQ(GlobalPermissionForVerb(QueueVerb::kCancel), GlobalPermission::kCancelAnyJobs);
  EXPECT_EQ(GlobalPermissionForVerb(QueueVerb::kReprioritize),
            GlobalPermission::kReprioritizeAnyJobs);
  EXPECT_EQ(GlobalPermissionForVerb(QueueVerb::kPreempt), GlobalPermission::kPreemptAnyJobs);
  EXPECT_EQ(GlobalPermissionForVerb(QueueVerb::kWatch), GlobalPermission::kWatchAllEvents);
}

TEST(AuthorizerTest, GlobalPermissionViaGroupOrUser) {
  Authorizer authorizer = MakeAuthorizer();
  EXPECT_TRUE(authorizer.CheckGlobal(kAdmin, GlobalPermission::kCreateQueue).ok());
  EXPECT_TRUE(
      authorizer.CheckGlobal({"x", {"queue-makers"}, false}, GlobalPermission::kCreateQueue).ok());
  EXPECT_TRUE(authorizer.CheckGlobal({"executor", {}, false}, GlobalPermission::kExecuteJobs).ok());
  EXPECT_TRUE(authorizer.CheckGlobal({"carol", {}, false}, GlobalPermission::kCordonQueue).ok());
  // A group named like a user (or the reverse) grants nothing.
  EXPECT_FALSE(authorizer.HasGlobal({"admins", {}, false}, GlobalPermission::kCreateQueue));
  EXPECT_FALSE(authorizer.HasGlobal({"x", {"executor"}, false}, GlobalPermission::kExecuteJobs));
  EXPECT_FALSE(authorizer.HasGlobal(kAdmin, GlobalPermission::kDeleteQueue));
}

TEST(AuthorizerTest, GlobalDenialNamesUserAndPermission) {
  Authorizer authorizer = MakeAuthorizer();
  absl::Status status = authorizer.CheckGlobal(kBob, GlobalPermission::kCreateQueue);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "user \"bob\" lacks permission \"create_queue\"");
}

TEST(AuthorizerTest, QueueVerbViaUserSubject) {
  Authorizer authorizer = MakeAuthorizer();
  regatta::v1::Queue queue = MakeQueue("q1");
  Grant(queue, "user", "bob", {"submit", "cancel"});
  EXPECT_TRUE(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kSubmit).ok());
  EXPECT_TRUE(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kCancel).ok());
  EXPECT_FALSE(authorizer.HasQueueVerb(kBob, queue, QueueVerb::kPreempt));
  EXPECT_FALSE(authorizer.HasQueueVerb({"alice", {"bob"}, false}, queue, QueueVerb::kSubmit));
}

TEST(AuthorizerTest, QueueVerbViaGroupSubject) {
  Authorizer authorizer = MakeAuthorizer();
  regatta::v1::Queue queue = MakeQueue("q1");
  Grant(queue, "group", "team-b", {"watch"});
  Grant(queue, "Group", "team-c", {"reprioritize"});  // Armada's capitalised kind
  EXPECT_TRUE(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kWatch).ok());
  EXPECT_FALSE(authorizer.HasQueueVerb({"team-b", {}, false}, queue, QueueVerb::kWatch));
  EXPECT_TRUE(
      authorizer.HasQueueVerb({"dora", {"x", "team-c"}, false}, queue, QueueVerb::kReprioritize));
  EXPECT_FALSE(authorizer.HasQueueVerb(kBob, queue, QueueVerb::kReprioritize));
}

TEST(AuthorizerTest, GlobalPermissionGrantsVerbOnEveryQueue) {
  Authorizer authorizer = MakeAuthorizer();
  regatta::v1::Queue queue = MakeQueue("q1");
  EXPECT_TRUE(authorizer.CheckQueueVerb(kAdmin, queue, QueueVerb::kSubmit).ok());
  EXPECT_FALSE(authorizer.HasQueueVerb(kAdmin, queue, QueueVerb::kCancel));
  EXPECT_TRUE(authorizer.HasQueueVerb({"o", {"observers"}, false}, queue, QueueVerb::kWatch));
}

TEST(AuthorizerTest, AnonymousIsAuthorizedByItsGroups) {
  Authorizer authorizer = MakeAuthorizer();
  regatta::v1::Queue queue = MakeQueue("public");
  Grant(queue, "group", "everyone", {"watch"});
  const Principal anonymous{"anonymous", {"everyone"}, true};
  EXPECT_TRUE(authorizer.CheckQueueVerb(anonymous, queue, QueueVerb::kWatch).ok());
  EXPECT_EQ(authorizer.CheckQueueVerb(anonymous, queue, QueueVerb::kSubmit).message(),
            "user \"anonymous\" may not submit to queue \"public\" (needs verb \"submit\" on the "
            "queue or permission \"submit_any_jobs\")");
}

TEST(AuthorizerTest, QueueDenialNamesUserVerbAndQueue) {
  Authorizer authorizer = MakeAuthorizer();
  regatta::v1::Queue queue = MakeQueue("q1");
  Grant(queue, "user", "alice", {"submit", "cancel", "reprioritize", "preempt", "watch"});
  Grant(queue, "user", "bob", {"watch"});
  absl::Status status = authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kSubmit);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "user \"bob\" may not submit to queue \"q1\" (needs verb \"submit\" on the queue or "
            "permission \"submit_any_jobs\")");
  EXPECT_EQ(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kCancel).message(),
            "user \"bob\" may not cancel jobs in queue \"q1\" (needs verb \"cancel\" on the "
            "queue or permission \"cancel_any_jobs\")");
  EXPECT_THAT(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kReprioritize).message(),
              HasSubstr("\"reprioritize\" on the queue or permission \"reprioritize_any_jobs\""));
  EXPECT_THAT(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kPreempt).message(),
              HasSubstr("may not preempt jobs in queue \"q1\""));
  EXPECT_TRUE(authorizer.CheckQueueVerb(kBob, queue, QueueVerb::kWatch).ok());
}

TEST(AuthorizerTest, CreateRejectsUnknownPermissionsAndEmptyNames) {
  AuthorizationConfig config;
  config.permission_group_mapping = {{"create_queues", {"admins"}}};
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(config);
  ASSERT_FALSE(authorizer.ok());
  EXPECT_EQ(authorizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(authorizer.status().message(),
              HasSubstr("permissionGroupMapping.create_queues: unknown permission"));

  config = {};
  config.permission_user_mapping = {{"submit", {"bob"}}};
  EXPECT_THAT(Authorizer::Create(config).status().message(),
              HasSubstr("permissionUserMapping.submit: unknown permission"));

  config = {};
  config.permission_group_mapping = {{"delete_queue", {"admins", ""}}};
  EXPECT_THAT(Authorizer::Create(config).status().message(),
              HasSubstr("permissionGroupMapping.delete_queue[1]: must not be empty"));

  EXPECT_TRUE(Authorizer::Create({}).ok());
}

TEST(ValidateQueuePermissionsTest, AcceptsValidEntries) {
  regatta::v1::Queue queue = MakeQueue("q1");
  EXPECT_TRUE(ValidateQueuePermissions(queue).ok());
  Grant(queue, "user", "alice", {"submit", "cancel", "reprioritize", "preempt", "watch"});
  Grant(queue, "Group", "team-a", {"watch"});
  EXPECT_TRUE(ValidateQueuePermissions(queue).ok());
}

TEST(ValidateQueuePermissionsTest, NamesOffendingField) {
  regatta::v1::Queue queue = MakeQueue("q1");
  Grant(queue, "user", "alice", {"submit"});
  Grant(queue, "group", "team-a", {"watch", "delete"});
  absl::Status status = ValidateQueuePermissions(queue);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("permissions[1].verbs[1]: unknown verb \"delete\""));

  queue = MakeQueue("q1");
  Grant(queue, "user", "alice", {"submit"});
  queue.mutable_permissions(0)->add_subjects()->set_kind("role");
  queue.mutable_permissions(0)->mutable_subjects(1)->set_name("x");
  EXPECT_EQ(ValidateQueuePermissions(queue).message(),
            "permissions[0].subjects[1].kind: unknown subject kind \"role\" (want user or group)");

  queue = MakeQueue("q1");
  Grant(queue, "group", "", {"submit"});
  EXPECT_EQ(ValidateQueuePermissions(queue).message(),
            "permissions[0].subjects[0].name: must not be empty");

  queue = MakeQueue("q1");
  Grant(queue, "", "bob", {"submit"});
  EXPECT_THAT(ValidateQueuePermissions(queue).message(),
              HasSubstr("permissions[0].subjects[0].kind: unknown subject kind \"\""));

  queue = MakeQueue("q1");
  queue.add_permissions()->add_verbs("submit");
  EXPECT_EQ(ValidateQueuePermissions(queue).message(),
            "permissions[0].subjects: must not be empty");

  queue = MakeQueue("q1");
  Grant(queue, "user", "bob", {});
  EXPECT_EQ(ValidateQueuePermissions(queue).message(), "permissions[0].verbs: must not be empty");
}

TEST(CreatorQueuePermissionTest, GrantsEveryVerbToCreator) {
  regatta::v1::Queue queue = MakeQueue("q1");
  *queue.add_permissions() = CreatorQueuePermission(kBob);
  EXPECT_TRUE(ValidateQueuePermissions(queue).ok());
  Authorizer authorizer = MakeAuthorizer();
  for (QueueVerb verb : kAllQueueVerbs) {
    EXPECT_TRUE(authorizer.HasQueueVerb(kBob, queue, verb)) << QueueVerbName(verb);
  }
}

}  // namespace
}  // namespace regatta::auth
