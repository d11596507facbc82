#ifndef REGATTA_SRC_API_READ_ACCESS_H_
#define REGATTA_SRC_API_READ_ACCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/api/api_context.h"
#include "src/api/auth/principal.h"
#include "src/store/pipeline_views.h"

namespace regatta::api {

// Who may read data derived from a queue's jobs (jobs, their logs and reports, pipeline runs and
// their tasks and artifacts): the principal needs the queue's `watch` verb or the global
// `watch_all_events` permission, exactly as for the queue's event stream (docs/auth.md).
//
// One per request and not thread-safe: each queue is looked up and decided once, so a list
// checks its rows' queues in one pass.
class ReadAccess {
 public:
  ReadAccess(const ApiContext& ctx, const auth::Principal& principal);

  const auth::Principal& principal() const { return principal_; }

  // The principal holds watch_all_events: every queue, existing or not, is readable.
  bool All() const { return all_; }

  // Whether data of `queue` is readable. The data of a queue that no longer exists only with
  // watch_all_events (its permissions went with it).
  absl::StatusOr<bool> MayRead(absl::string_view queue);

  // PERMISSION_DENIED naming `what` (e.g. `job 01H...`), the queue and what is needed:
  // `user "bob" may not read job 01H... of queue "q1" (needs verb "watch" on the queue or
  // permission "watch_all_events")`.
  absl::Status Check(absl::string_view queue, absl::string_view what);

  // Pipeline runs and recurring runs are also readable by their owner (a named, not anonymous
  // principal), who may change them too (RunService::LoadForChange).
  absl::StatusOr<bool> MayReadOwned(absl::string_view queue, absl::string_view owner);
  absl::Status CheckOwned(absl::string_view queue, absl::string_view owner, absl::string_view what);

  // Data that outlives its pipeline run (artifacts, lineage) is readable like the run (owner or
  // queue); once the run is gone only with watch_all_events. Runs are looked up once each.
  absl::StatusOr<bool> MayReadRun(absl::string_view run_id);
  absl::Status CheckRun(absl::string_view run_id, absl::string_view what);

  // PERMISSION_DENIED unless the principal holds watch_all_events, naming `what` and `why` only
  // that permission will do (e.g. "the queue does not exist").
  absl::Status CheckAll(absl::string_view what, absl::string_view why) const;

  // Every existing queue the principal may read, in name order (for list filters; with All()
  // a list needs no filter).
  absl::StatusOr<std::vector<std::string>> ReadableQueues();

 private:
  struct Decision {
    bool exists = false;
    bool readable = false;
  };
  absl::StatusOr<Decision> Decide(absl::string_view queue);
  absl::StatusOr<const std::pair<std::string, std::string>*> RunOf(absl::string_view run_id);

  const ApiContext& ctx_;
  const auth::Principal& principal_;
  const bool all_;
  absl::flat_hash_map<std::string, Decision> decisions_;
  // run id -> (queue, owner); empty queue: the run does not exist.
  absl::flat_hash_map<std::string, std::pair<std::string, std::string>> runs_;
};

// One page of a listing restricted to the rows `readable` accepts, in one pass over the
// listing: each store page asks for the rows still missing and is used whole, so the last one's
// token continues the listing where this page ends. `page_size` <= 0: 100. With
// `all_readable` (e.g. ReadAccess::All()) it is the store's page as is.
template <typename Row, typename Read, typename Readable>
absl::StatusOr<store::Page<Row>> ReadablePage(bool all_readable, int page_size,
                                              const std::string& page_token, Read read,
                                              Readable readable) {
  if (all_readable) return read(store::PageRequest{page_token, page_size});
  const size_t want = page_size <= 0 ? 100 : page_size;
  store::Page<Row> out;
  store::PageRequest request{page_token, 0};
  while (true) {
    request.limit = static_cast<int>(want - out.rows.size());
    absl::StatusOr<store::Page<Row>> page = read(request);
    if (!page.ok()) return page.status();
    for (Row& row : page->rows) {
      absl::StatusOr<bool> keep = readable(row);
      if (!keep.ok()) return keep.status();
      if (*keep) out.rows.push_back(std::move(row));
    }
    if (page->next_page_token.empty() || out.rows.size() >= want) {
      out.next_page_token = std::move(page->next_page_token);
      return out;
    }
    request.page_token = std::move(page->next_page_token);
  }
}

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_READ_ACCESS_H_
