#ifndef REGATTA_SRC_STORE_LIST_ALL_H_
#define REGATTA_SRC_STORE_LIST_ALL_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/common/status_macros.h"
#include "src/store/pipeline_views.h"

namespace regatta::store {

// Every row of a paged listing: calls `list(page)` (a PageRequest -> StatusOr<Page<Row>>) page
// after page until the last. For listings known to stay small (Configurations, Instances).
template <typename Row, typename List>
absl::StatusOr<std::vector<Row>> ListAll(List list) {
  std::vector<Row> rows;
  PageRequest page;
  page.limit = 500;
  while (true) {
    ASSIGN_OR_RETURN(Page<Row> got, list(page));
    for (Row& row : got.rows) rows.push_back(std::move(row));
    if (got.next_page_token.empty()) return rows;
    page.page_token = std::move(got.next_page_token);
  }
}

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_LIST_ALL_H_
