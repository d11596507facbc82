#include "src/scheduler/devices/device_slots.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace regatta::scheduler {
namespace {

// Slots a quantity asks for: whole devices, a fraction counts as one.
int64_t SlotsFor(Quantity quantity) { return (quantity.milli() + 999) / 1000; }

}  // namespace

bool RequestsDevices(const ResourceList& requests, const ResourceNames& names) {
  for (int i = 0; i < requests.size(); ++i) {
    if (requests.Get(i).milli() > 0 && IsDeviceResource(names.Name(i))) return true;
  }
  return false;
}

DeviceSlots::DeviceSlots(std::vector<regatta::v1::Instance> instances) {
  std::sort(instances.begin(), instances.end(),
            [](const auto& a, const auto& b) { return a.name() < b.name(); });
  entries_.reserve(instances.size());
  for (regatta::v1::Instance& instance : instances) {
    if (instance.name().empty() || by_instance_.contains(instance.name())) continue;
    Entry& entry = entries_.emplace_back();
    for (int i = 0; i < instance.capacity(); ++i) {
      entry.slots.push_back(absl::StrCat(instance.name(), "-", i));
      slot_instance_[entry.slots.back()] = instance.name();
    }
    entry.nodes.insert(instance.nodes().begin(), instance.nodes().end());
    entry.instance = std::move(instance);
    by_instance_[entry.instance.name()] = entries_.size() - 1;
    by_configuration_[entry.instance.configuration_name()].push_back(entries_.size() - 1);
  }
}

void DeviceSlots::Hold(absl::string_view slot, absl::string_view holder) {
  if (!slot_instance_.contains(slot) || holder.empty()) return;
  holders_[slot] = std::string(holder);
}

void DeviceSlots::AddAllocatable(std::vector<Node>& nodes, ResourceNames& names) const {
  for (Node& node : nodes) {
    absl::flat_hash_map<int, int64_t> add;
    for (const Entry& entry : entries_) {
      if (!entry.nodes.contains(node.id) || entry.slots.empty()) continue;
      const int64_t slots = static_cast<int64_t>(entry.slots.size());
      add[names.Intern(absl::StrCat(kDeviceResourcePrefix, entry.instance.name()))] += slots;
      add[names.Intern(absl::StrCat(kDeviceResourcePrefix, entry.instance.configuration_name()))] +=
          slots;
    }
    for (const auto& [index, slots] : add) {
      node.allocatable.Set(index, node.allocatable.Get(index) + Quantity::FromUnits(slots));
    }
  }
}

std::vector<DeviceSlots::Entry*> DeviceSlots::Candidates(absl::string_view name,
                                                         absl::string_view node) {
  std::vector<Entry*> out;
  auto add = [&](size_t index) {
    Entry& entry = entries_[index];
    if (entry.nodes.contains(node)) out.push_back(&entry);
  };
  if (auto it = by_instance_.find(name); it != by_instance_.end()) {
    add(it->second);
  } else if (auto config = by_configuration_.find(name); config != by_configuration_.end()) {
    for (size_t index : config->second) add(index);
  }
  return out;
}

std::optional<std::vector<DeviceClaim>> DeviceSlots::Claim(const ResourceList& requests,
                                                           absl::string_view node,
                                                           absl::string_view holder,
                                                           const ResourceNames& names) {
  std::vector<DeviceClaim> claims;
  for (int i = 0; i < requests.size(); ++i) {
    const std::string resource = names.Name(i);
    if (requests.Get(i).milli() <= 0 || !IsDeviceResource(resource)) continue;
    int64_t wanted = SlotsFor(requests.Get(i));
    const absl::string_view name = absl::string_view(resource).substr(kDeviceResourcePrefix.size());
    for (Entry* entry : Candidates(name, node)) {
      for (const std::string& slot : entry->slots) {
        if (wanted == 0) break;
        if (holders_.contains(slot)) continue;
        holders_[slot] = std::string(holder);
        claims.push_back(DeviceClaim{entry->instance.name(), slot});
        --wanted;
      }
      if (wanted == 0) break;
    }
    if (wanted > 0) {
      Unclaim(claims);
      return std::nullopt;
    }
  }
  return claims;
}

void DeviceSlots::Unclaim(const std::vector<DeviceClaim>& claims) {
  for (const DeviceClaim& claim : claims) holders_.erase(claim.slot);
}

const regatta::v1::Instance* DeviceSlots::FindInstance(absl::string_view name) const {
  auto it = by_instance_.find(name);
  return it == by_instance_.end() ? nullptr : &entries_[it->second].instance;
}

}  // namespace regatta::scheduler
