package io.fastblock.gateway.iscsi.login;

import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.scsi.BlockDevice;
import java.util.AbstractMap.SimpleImmutableEntry;
import io.fastblock.gateway.iscsi.TargetAccess;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The login phase of one connection as logic without sockets: takes Login Requests in order and
 * produces Login Responses. Stages: security (0) -> operational (1) -> full feature (3).
 * The target lookup is asynchronous; callers continue on their own executor.
 */
public final class LoginNegotiator {
    private static final Logger LOG = LoggerFactory.getLogger(LoginNegotiator.class);
    public static final int SECURITY = 0;
    public static final int OPERATIONAL = 1;
    public static final int FULL_FEATURE = 3;
    public static final int PORTAL_GROUP_TAG = 1;

    private final TargetCatalog catalog;
    private final SessionRegistry registry;
    private final Runnable closeSession;
    private final SessionParams params = new SessionParams();

    private boolean first = true;
    private boolean answeredFirst;
    private boolean declaredMaxRecv;
    private int stage = SECURITY;
    private String initiatorName;
    private String targetName;
    private boolean discovery;
    private long isid;
    private int tsih;
    private BlockDevice device;
    /** Set when the target's access rule asks for CHAP. */
    private ChapAuthenticator chap;
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * @param closeSession what to run when a later login reinstates this session (closes the
     *                     connection and ends the session)
     */
    public LoginNegotiator(TargetCatalog catalog, SessionRegistry registry, Runnable closeSession) {
        this.catalog = catalog;
        this.registry = registry;
        this.closeSession = closeSession;
    }

    public CompletableFuture<LoginReply> process(LoginRequest req) {
        if (req.versionMin() > 0) {
            return done(LoginReply.failure(LoginStatus.UNSUPPORTED_VERSION, req.csg()));
        }
        if (!first) {
            return afterStep(req);
        }
        first = false;
        initiatorName = req.keys().get("InitiatorName");
        String sessionType = req.keys().getOrDefault("SessionType", "Normal");
        if (initiatorName == null || initiatorName.isEmpty()) {
            return done(LoginReply.failure(LoginStatus.MISSING_PARAMETER, req.csg()));
        }
        if (!sessionType.equals("Normal") && !sessionType.equals("Discovery")) {
            return done(LoginReply.failure(LoginStatus.SESSION_TYPE_NOT_SUPPORTED, req.csg()));
        }
        discovery = sessionType.equals("Discovery");
        params.discovery = discovery;
        isid = req.isid();
        if (req.tsih() != 0) {
            // MaxConnections=1: a known TSIH would be a second connection, an unknown one a stale session.
            return done(LoginReply.failure(registry.exists(req.tsih())
                    ? LoginStatus.TOO_MANY_CONNECTIONS : LoginStatus.SESSION_DOES_NOT_EXIST, req.csg()));
        }
        if (discovery) {
            // Discovery reveals only names the catalog lets this initiator see; no secret to check.
            return afterStep(req);
        }
        targetName = req.keys().get("TargetName");
        if (targetName == null || targetName.isEmpty()) {
            return done(LoginReply.failure(LoginStatus.MISSING_PARAMETER, req.csg()));
        }
        CompletableFuture<TargetAccess> rule;
        try {
            rule = catalog.access(targetName, initiatorName);
        } catch (RuntimeException e) {
            rule = CompletableFuture.failedFuture(e);
        }
        return rule.handle((acc, err) -> {
            if (err != null) {
                LOG.warn("access rule for {} failed: {}", targetName, err.toString());
                return LoginReply.failure(LoginStatus.SERVICE_UNAVAILABLE, req.csg());
            }
            if (!acc.allowed()) {
                LOG.info("login of {} to {} refused: not exported to it", initiatorName, targetName);
                return LoginReply.failure(LoginStatus.AUTHORIZATION_FAILURE, req.csg());
            }
            if (acc.chap() != null) {
                chap = new ChapAuthenticator(acc.chap(), RANDOM);
            }
            return null;
        }).thenCompose(refused -> refused != null ? done(refused) : afterStep(req));
    }

    /**
     * Runs one negotiation step, then opens the device once the initiator is authenticated (never
     * for an unauthenticated one: opening takes the volume's lease) and registers the session
     * when the step enters the full feature phase.
     */
    private CompletableFuture<LoginReply> afterStep(LoginRequest req) {
        LoginReply reply = step(req);
        if (reply.failed() || discovery || device != null || !authenticated()) {
            return done(register(reply));
        }
        CompletableFuture<Optional<BlockDevice>> opening;
        try {
            opening = catalog.open(targetName, initiatorName);
        } catch (RuntimeException e) {
            opening = CompletableFuture.failedFuture(e);
        }
        return opening.handle((dev, err) -> {
            if (err != null) {
                LOG.warn("target lookup for {} failed: {}", targetName, err.toString());
                return LoginReply.failure(LoginStatus.SERVICE_UNAVAILABLE, req.csg());
            }
            if (dev.isEmpty()) {
                return LoginReply.failure(LoginStatus.TARGET_NOT_FOUND, req.csg());
            }
            device = dev.get();
            return register(reply);
        });
    }

    private boolean authenticated() {
        return chap == null || chap.done();
    }

    private LoginReply register(LoginReply reply) {
        if (!reply.fullFeature()) {
            return reply;
        }
        tsih = registry.register(new SessionRegistry.Identity(initiatorName, isid,
                discovery ? "" : targetName), closeSession);
        return new LoginReply(reply.status(), reply.transit(), reply.csg(), reply.nsg(), tsih, reply.keys(), true);
    }

    private static CompletableFuture<LoginReply> done(LoginReply r) {
        return CompletableFuture.completedFuture(r);
    }

    private LoginReply step(LoginRequest req) {
        int csg = req.csg();
        if (csg == 2 || csg == FULL_FEATURE || csg < stage || (req.transit() && (req.nsg() == 2 || req.nsg() <= csg))) {
            return LoginReply.failure(LoginStatus.INVALID_DURING_LOGIN, csg);
        }
        if (csg != SECURITY && !authenticated()) {
            LOG.info("login of {} to {}: CHAP required, operational stage reached without it", initiatorName,
                    targetName);
            return LoginReply.failure(LoginStatus.AUTHENTICATION_FAILURE, csg);
        }
        stage = csg;
        List<Map.Entry<String, String>> out = new ArrayList<>();
        Map<String, String> chapKeys = new HashMap<>();
        for (Map.Entry<String, String> e : req.keys().entrySet()) {
            String key = e.getKey();
            if (key.equals("AuthMethod")) {
                if (csg != SECURITY) {
                    out.add(new SimpleImmutableEntry<>(key, KeyNegotiation.IRRELEVANT));
                    continue;
                }
                List<String> offered = List.of(e.getValue().split(","));
                String pick = chap != null ? (offered.contains("CHAP") ? "CHAP" : null)
                        : (offered.contains("None") ? "None" : null);
                if (pick == null) {
                    LOG.info("login of {} to {}: AuthMethod {} offered, {} required", initiatorName, targetName,
                            e.getValue(), chap != null ? "CHAP" : "None");
                    return LoginReply.failure(LoginStatus.AUTHENTICATION_FAILURE, csg);
                }
                out.add(new SimpleImmutableEntry<>(key, pick));
                continue;
            }
            if (key.startsWith("CHAP_")) {
                if (chap == null || csg != SECURITY) {
                    return LoginReply.failure(LoginStatus.AUTHENTICATION_FAILURE, csg);
                }
                chapKeys.put(key, e.getValue());
                continue;
            }
            Map.Entry<String, String> a = KeyNegotiation.answer(key, e.getValue(), params);
            if (a != null) {
                out.add(a);
            }
        }
        if (!chapKeys.isEmpty()) {
            try {
                if (chapKeys.containsKey("CHAP_A")) {
                    if (chapKeys.size() != 1) {
                        throw new ChapAuthenticator.ChapFailure("CHAP_A mixed with other CHAP keys");
                    }
                    out.addAll(chap.offerChallenge(chapKeys.get("CHAP_A")));
                } else {
                    out.addAll(chap.verify(chapKeys.get("CHAP_N"), chapKeys.get("CHAP_R"), chapKeys.get("CHAP_I"),
                            chapKeys.get("CHAP_C")));
                    LOG.info("CHAP: {} authenticated for {}{}", initiatorName, targetName,
                            chapKeys.containsKey("CHAP_C") ? " (mutual)" : "");
                }
            } catch (ChapAuthenticator.ChapFailure f) {
                LOG.info("CHAP login of {} to {} failed: {}", initiatorName, targetName, f.getMessage());
                return LoginReply.failure(LoginStatus.AUTHENTICATION_FAILURE, csg);
            }
        }
        if (params.firstBurstLength > params.maxBurstLength) {
            params.firstBurstLength = params.maxBurstLength;
            replace(out, "FirstBurstLength", String.valueOf(params.firstBurstLength));
        }
        if (csg == OPERATIONAL && !declaredMaxRecv) {
            declaredMaxRecv = true;
            if (out.stream().noneMatch(e -> e.getKey().equals("MaxRecvDataSegmentLength"))) {
                out.add(new SimpleImmutableEntry<>("MaxRecvDataSegmentLength",
                        String.valueOf(SessionParams.OUR_MAX_RECV_DATA_SEGMENT_LENGTH)));
            }
        } else if (csg == OPERATIONAL) {
            out.removeIf(e -> e.getKey().equals("MaxRecvDataSegmentLength") && !req.keys().containsKey(e.getKey()));
        }
        if (!answeredFirst) {
            answeredFirst = true;
            if (!discovery) {
                out.add(new SimpleImmutableEntry<>("TargetPortalGroupTag", String.valueOf(PORTAL_GROUP_TAG)));
            }
        }
        // The initiator continues its text in the next PDU: we answer empty-handed and wait (C=1).
        // Until CHAP is through, the target holds the initiator in the security stage (T=0).
        boolean transit = req.transit() && !req.cont() && authenticated();
        int nsg = transit ? req.nsg() : 0;
        boolean full = transit && nsg == FULL_FEATURE;
        if (transit) {
            stage = nsg;
        }
        return new LoginReply(LoginStatus.SUCCESS, transit, csg, nsg, 0, out, full);
    }

    private static void replace(List<Map.Entry<String, String>> out, String key, String value) {
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).getKey().equals(key)) {
                out.set(i, new SimpleImmutableEntry<>(key, value));
            }
        }
    }

    public SessionParams params() {
        return params;
    }

    public String initiatorName() {
        return initiatorName;
    }

    public String targetName() {
        return targetName;
    }

    public boolean discovery() {
        return discovery;
    }

    public long isid() {
        return isid;
    }

    public int tsih() {
        return tsih;
    }

    /** The opened device of a normal session (owned by the caller once login succeeded or failed). */
    public BlockDevice device() {
        return device;
    }
}
