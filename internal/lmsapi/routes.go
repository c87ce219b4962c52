package lmsapi

import (
	"github.com/lectern-lms/lectern/internal/httpx"
	"github.com/lectern-lms/lectern/internal/lms"
)

// routes lists every endpoint. Paths are relative to Prefix. Where public
// sources disagree on a method, both are registered.
func (a *API) routes(rt *httpx.Router) {
	// Users
	a.handle(rt, "POST", "/users/create", a.createUser)
	a.handle(rt, "DELETE", "/users/delete", a.deleteUser)
	a.handle(rt, "POST", "/users/list", a.listUsers)
	a.handle(rt, "GET", "/users/getuser", a.getUser)
	a.handle(rt, "POST", "/users/getuser", a.getUser)
	a.handle(rt, "GET", "/users/getuserbyEmail/{email}", a.getUserByEmail)
	a.handle(rt, "POST", "/users/listUsersenrolledincourse", a.enrolledCount(lms.KindCourse, "course_id"))
	a.handle(rt, "POST", "/users/listUsersenrolledintest", a.enrolledCount(lms.KindTest, "test_id"))
	a.handle(rt, "POST", "/users/listUsersenrolledinclass", a.enrolledCount(lms.KindClass, "class_id"))

	// Groups
	a.handle(rt, "POST", "/groups/create", a.createGroup)
	a.handle(rt, "POST", "/groups/addUser", a.addGroupUser)
	a.handle(rt, "POST", "/groups/list", a.listGroups)
	a.handle(rt, "POST", "/groups/listallusers", a.listGroupUsers)

	// Courses
	a.handle(rt, "POST", "/courses/enroll", a.enroll(enrollCourse))
	a.handle(rt, "POST", "/courses/unenroll", a.unenroll(enrollCourse))
	a.handle(rt, "POST", "/courses/list", a.listCourses)
	a.handle(rt, "GET", "/courses/get/{course_id}", a.getCourse)
	a.handle(rt, "POST", "/courses/create", a.createCourse)
	a.handle(rt, "PUT", "/courses/update", a.updateCourse)
	a.handle(rt, "DELETE", "/courses/delete/{course_id}", a.deleteCourse)
	a.handle(rt, "POST", "/courses/publish/{course_id}", a.setCourseStatus(lms.CoursePublished))
	a.handle(rt, "POST", "/courses/unpublish/{course_id}", a.setCourseStatus(lms.Unpublished))

	// Live classes
	a.handle(rt, "POST", "/liveClasses/create", a.createLiveClass)
	a.handle(rt, "POST", "/liveClasses/enroll", a.enroll(enrollClass))
	a.handle(rt, "POST", "/liveClasses/unenroll", a.unenroll(enrollClass))
	a.handle(rt, "POST", "/liveClasses/list", a.listLiveClasses)

	// Bundles: the seed's three rows, then what makes bundles usable.
	a.handle(rt, "POST", "/bundles/enroll", a.enroll(enrollBundle))
	a.handle(rt, "POST", "/bundles/unenroll", a.unenroll(enrollBundle))
	a.handle(rt, "POST", "/bundles/list", a.listBundles)
	a.handle(rt, "POST", "/bundles/create", a.createBundle)
	a.handle(rt, "GET", "/bundles/get/{bundle_id}", a.getBundle)
	a.handle(rt, "PUT", "/bundles/update/{bundle_id}", a.updateBundle)
	a.handle(rt, "DELETE", "/bundles/delete/{bundle_id}", a.deleteBundle)
	a.handle(rt, "POST", "/bundles/addItem", a.addBundleItem)
	a.handle(rt, "POST", "/bundles/removeItem", a.removeBundleItem)

	// Tests
	a.handle(rt, "POST", "/tests/enroll", a.enroll(enrollTest))
	a.handle(rt, "POST", "/tests/unenroll", a.unenroll(enrollTest))
	a.handle(rt, "POST", "/tests/list", a.listTests)
	a.handle(rt, "GET", "/tests/{test_id}", a.getTest)
	a.handle(rt, "POST", "/tests/create", a.createTest)
	a.handle(rt, "PUT", "/tests/{test_id}", a.updateTest)
	a.handle(rt, "DELETE", "/tests/{test_id}", a.deleteTest)
	a.handle(rt, "POST", "/tests/publish/{test_id}", a.setTestStatus(lms.TestPublished))
	a.handle(rt, "POST", "/tests/unpublish/{test_id}", a.setTestStatus(lms.Unpublished))
	a.handle(rt, "DELETE", "/tests/removeFromCatalog/{test_id}", a.setCatalog(false))
	a.handle(rt, "POST", "/tests/addToCatalog/{test_id}", a.setCatalog(true))

	// Products and categories (also served on --alt-addr)
	a.productRoutes(rt)

	// Gamification
	a.gamificationRoutes(rt)

	// Shopping-cart pricing, quote and discounts
	a.commerceRoutes(rt)
	a.paymentRoutes(rt)

	// Learner sign-in: login links and logout
	a.signinRoutes(rt)

	// Course content, unlock rules and progress
	a.learningRoutes(rt)

	// Certificates
	a.certificateRoutes(rt)

	// Test engine: question bank, test composition, attempts, results
	a.quizRoutes(rt)

	// Outgoing webhooks: endpoints, delivery log, re-enable and replay
	a.webhookRoutes(rt)
}
