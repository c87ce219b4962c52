-- The unfiltered listings of orders, certificates and quiz attempts take
-- their totals from row_counts too (0033), kinds named for their tables,
-- and read their pages in the listing's order from an index: before, each
-- call counted the domain's rows, and certificates and attempts sorted
-- all of them for every page (docs/performance.md).
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'orders', COUNT(*) FROM orders GROUP BY domain_id;
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'certificates', COUNT(*) FROM certificates GROUP BY domain_id;
INSERT INTO row_counts (domain_id, kind, n) SELECT domain_id, 'quiz_attempts', COUNT(*) FROM quiz_attempts GROUP BY domain_id;

CREATE INDEX certificates_domain ON certificates (domain_id, id);
-- Orders of one status (orders/list?status=paid): the matches counted and
-- the page read from this index, not from all the domain's orders.
CREATE INDEX orders_status ON orders (domain_id, status, id);
CREATE INDEX quiz_attempts_started ON quiz_attempts (domain_id, started_at, id);

-- @sqlite
CREATE TRIGGER orders_count_ins AFTER INSERT ON orders BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'orders', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER orders_count_del AFTER DELETE ON orders BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'orders';
END;
CREATE TRIGGER certificates_count_ins AFTER INSERT ON certificates BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'certificates', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER certificates_count_del AFTER DELETE ON certificates BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'certificates';
END;
CREATE TRIGGER quiz_attempts_count_ins AFTER INSERT ON quiz_attempts BEGIN
	INSERT INTO row_counts (domain_id, kind, n) VALUES (NEW.domain_id, 'quiz_attempts', 1)
		ON CONFLICT (domain_id, kind, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER quiz_attempts_count_del AFTER DELETE ON quiz_attempts BEGIN
	UPDATE row_counts SET n = n - 1 WHERE domain_id = OLD.domain_id AND kind = 'quiz_attempts';
END;

-- @postgres
-- row_counts_trg (0039) counts under the table's name and stands aside
-- while a domain import writes its counters itself.
CREATE TRIGGER orders_count AFTER INSERT OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION row_counts_trg();
CREATE TRIGGER certificates_count AFTER INSERT OR DELETE ON certificates FOR EACH ROW EXECUTE FUNCTION row_counts_trg();
CREATE TRIGGER quiz_attempts_count AFTER INSERT OR DELETE ON quiz_attempts FOR EACH ROW EXECUTE FUNCTION row_counts_trg();
