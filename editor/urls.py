"""URL routes. Every page needs a signed-in user except sign-in and ``/healthz``."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from editor.views import health, home

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
