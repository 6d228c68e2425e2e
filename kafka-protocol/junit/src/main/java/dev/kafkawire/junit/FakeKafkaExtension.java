package dev.kafkawire.junit;

import java.lang.reflect.AnnotatedElement;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link FakeKafka}: starts a cluster before a
 * class's tests (its {@code @FakeKafka} class annotation) or before one test
 * (a method annotation), and resolves {@link FakeKafkaCluster} parameters
 * to the nearest one. The cluster is kept in the extension context's store,
 * which JUnit closes when that context ends on every path (after the last
 * {@code @AfterAll} or {@code @AfterEach}, whether the tests passed, failed
 * or threw).
 */
public final class FakeKafkaExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(FakeKafkaExtension.class);
    private static final String KEY = "cluster";

    /**
     * The store's handle on a cluster: closed by JUnit with its context (as
     * an AutoCloseable from JUnit 5.13, a CloseableResource before).
     */
    @SuppressWarnings("deprecation")
    private static final class Resource implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final FakeKafkaCluster cluster;

        Resource(FakeKafkaCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        public void close() {
            cluster.close();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Optional<FakeKafka> annotation = context.getTestClass()
                .flatMap(type -> AnnotationSupport.findAnnotation(type, FakeKafka.class));
        annotation.ifPresent(settings -> start(context, settings));
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Optional<FakeKafka> annotation = context.getTestMethod()
                .flatMap(method -> AnnotationSupport.findAnnotation(method, FakeKafka.class));
        annotation.ifPresent(settings -> start(context, settings));
    }

    private static void start(ExtensionContext context, FakeKafka settings) {
        FakeKafkaCluster cluster = FakeKafkaCluster.builder(settings).start();
        // Put at once: a failure after this point still closes it.
        context.getStore(NAMESPACE).put(KEY, new Resource(cluster));
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == FakeKafkaCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        // The nearest store first: a method's cluster, then its class's (and
        // an enclosing class's, for @Nested tests).
        Resource resource = context.getStore(NAMESPACE).get(KEY, Resource.class);
        if (resource != null) {
            return resource.cluster;
        }
        AnnotatedElement where = parameter.getDeclaringExecutable();
        throw new ParameterResolutionException("no fake Kafka cluster for " + where
                + ": put @FakeKafka on the test class (for constructors and @BeforeAll methods) or on the test method");
    }
}
