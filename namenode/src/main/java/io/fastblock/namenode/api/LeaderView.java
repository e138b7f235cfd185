package io.fastblock.namenode.api;

import java.util.Optional;

/** Whether this namenode leads, and where the leader is; the HTTP layer sends writes there. */
public interface LeaderView {
    boolean isLeader();

    /** The leader's base URL, when the election knows one. */
    Optional<String> leaderUrl();

    /** A namenode alone: always the leader. */
    LeaderView ALONE = new LeaderView() {
        @Override
        public boolean isLeader() {
            return true;
        }

        @Override
        public Optional<String> leaderUrl() {
            return Optional.empty();
        }
    };
}
