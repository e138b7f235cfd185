package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/** A replication group: members in chain order (head, middle, tail) at {@code chainVersion}. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record GroupInfo(int id, long chainVersion, List<GroupMember> members) {
    public GroupInfo {
        members = members == null ? List.of() : List.copyOf(members);
    }
}
